import { Badge, Button, Card, Flex, Heading, Table, Text } from "@radix-ui/themes";
import { useState } from "react";
import type { Identity } from "../../../../gen/latchkey/v2/identities_pb.js";
import { describeError, mayDo } from "../api.ts";
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

/** Identities: search, create, delete; one opened shows its limits, credits and keys. */
export function IdentitiesPage({ session, lk }: PageProps) {
  const [search, setSearch] = useState("");
  const pages = usePages();
  const { cursor } = pages;
  const list = useLoad(
    () => lk.identities.listIdentities({ limit: 50, cursor, search: search || undefined }),
    "list identities",
    [cursor, search],
  );
  const [externalId, setExternalId] = useState("");
  const [open, setOpen] = useState<Identity | null>(null);
  return (
    <>
      <Flex justify="between" align="center" wrap="wrap" gap="3" mb="4">
        <Heading as="h1">Identities</Heading>
        {mayDo(session, "identity.*.create_identity") && (
          <FormDialog
            trigger={<Button>Create identity</Button>}
            title="Create an identity"
            submit="Create"
            doing="create identities"
            onSubmit={async () => {
              await lk.identities.createIdentity({ externalId });
              setExternalId("");
              list.reload();
            }}
          >
            <Field label="External id" value={externalId} onChange={setExternalId} required />
          </FormDialog>
        )}
      </Flex>
      <Field
        label="Search by external id"
        value={search}
        onChange={(v) => {
          setSearch(v);
          pages.reset();
        }}
      />
      <ErrorNote message={list.error} />
      <div className="table-scroll">
        <Table.Root variant="surface" mt="3">
          <TableHead caption="Identities" columns={["External id", "Limits", "Credits"]} actions />
          <Table.Body>
            {(list.data?.data ?? []).map((i) => (
              <Table.Row key={i.id}>
                <Table.RowHeaderCell>{i.externalId}</Table.RowHeaderCell>
                <Table.Cell>
                  {i.ratelimits.map((r) => (
                    <Badge key={r.id} mr="1">
                      {r.name}: {r.limit.toString()} / {Number(r.duration) / 1000}s
                    </Badge>
                  ))}
                </Table.Cell>
                <Table.Cell>{i.credits?.remaining?.toString() ?? "—"}</Table.Cell>
                <Table.Cell>
                  <Flex gap="2">
                    <Button size="1" variant="soft" onClick={() => setOpen(i)}>
                      Keys
                    </Button>
                    <ConfirmDelete
                      what={`identity ${i.externalId}`}
                      doing="delete identities"
                      consequence="Its keys stay, without an identity."
                      onConfirm={() =>
                        lk.identities.deleteIdentity({ identity: i.id }).then(list.reload)
                      }
                    />
                  </Flex>
                </Table.Cell>
              </Table.Row>
            ))}
          </Table.Body>
        </Table.Root>
      </div>
      <Pager pages={pages} pagination={list.data?.pagination} />
      {open && <IdentityKeys identity={open} lk={lk} />}
    </>
  );
}

/** The keys of one identity, in every API the root key may read (first 20 APIs). */
function IdentityKeys({ identity, lk }: { identity: Identity; lk: PageProps["lk"] }) {
  const keys = useLoad(
    async () => {
      const apis = await lk.apis.listApis({ limit: 20 });
      const found = await Promise.all(
        apis.data.map(async (api) => {
          try {
            const page = await lk.apis.listKeys({
              apiId: api.id,
              externalId: identity.externalId,
              limit: 100,
            });
            return page.data.map((k) => ({ api: api.name, key: k, error: null as string | null }));
          } catch (e) {
            return [
              { api: api.name, key: null, error: describeError(e, `read keys of ${api.name}`) },
            ];
          }
        }),
      );
      return found.flat();
    },
    "list APIs",
    [identity.id],
  );
  return (
    <Card mt="4">
      <Heading as="h2" size="4" mb="2">
        Keys of {identity.externalId}
      </Heading>
      <ErrorNote message={keys.error} />
      {keys.data?.length === 0 && <Text color="gray">No keys.</Text>}
      {keys.data?.map((row) =>
        row.key ? (
          <Text as="p" size="2" key={row.key.keyId}>
            {row.api}: <code>{row.key.start}</code> {row.key.name ?? ""}
          </Text>
        ) : (
          <Text as="p" size="2" color="gray" key={row.api}>
            {row.error}
          </Text>
        ),
      )}
    </Card>
  );
}
