import { Button, Flex, Heading, Link, Table, Text } from "@radix-ui/themes";
import { useState } from "react";
import { mayDo } from "../api.ts";
import {
  ConfirmDelete,
  ErrorNote,
  Field,
  FormDialog,
  TableHead,
  useLoad,
} from "../components/common.tsx";
import { Pager, usePages } from "../components/paging.tsx";
import type { PageProps } from "../router.tsx";

/** The workspace's APIs the root key may read: list, create, delete. */
export function ApisPage({ session, lk, go }: PageProps) {
  const pages = usePages();
  const { cursor } = pages;
  const list = useLoad(() => lk.apis.listApis({ limit: 50, cursor }), "list APIs", [cursor]);
  const [name, setName] = useState("");
  return (
    <>
      <Flex justify="between" align="center" wrap="wrap" gap="3" mb="4">
        <Heading as="h1">APIs</Heading>
        {mayDo(session, "api.*.create_api") && (
          <FormDialog
            trigger={<Button>Create API</Button>}
            title="Create an API"
            submit="Create"
            doing="create APIs"
            onSubmit={async () => {
              const { data } = await lk.apis.createApi({ name });
              setName("");
              if (data) go(`/console/apis/${data.apiId}`);
            }}
          >
            <Field
              label="Name"
              value={name}
              onChange={setName}
              required
              hint="3 to 255 characters"
            />
          </FormDialog>
        )}
      </Flex>
      <ErrorNote message={list.error} />
      {list.data && list.data.data.length === 0 && <Text color="gray">No APIs yet.</Text>}
      {list.data && list.data.data.length > 0 && (
        <div className="table-scroll">
          <Table.Root variant="surface">
            <TableHead caption="APIs" columns={["Name", "API id"]} actions />
            <Table.Body>
              {list.data.data.map((api) => (
                <Table.Row key={api.id}>
                  <Table.RowHeaderCell>
                    <Link
                      href={`/console/apis/${api.id}`}
                      onClick={(e) => {
                        e.preventDefault();
                        go(`/console/apis/${api.id}`);
                      }}
                    >
                      {api.name}
                    </Link>
                  </Table.RowHeaderCell>
                  <Table.Cell>
                    <code>{api.id}</code>
                  </Table.Cell>
                  <Table.Cell>
                    <ConfirmDelete
                      what={`${api.name}`}
                      submit="Delete API"
                      doing="delete this API"
                      consequence="Its keys stop verifying at once. This cannot be undone."
                      onConfirm={() => lk.apis.deleteApi({ apiId: api.id }).then(list.reload)}
                    />
                  </Table.Cell>
                </Table.Row>
              ))}
            </Table.Body>
          </Table.Root>
        </div>
      )}
      <Pager pages={pages} pagination={list.data?.pagination} />
    </>
  );
}
