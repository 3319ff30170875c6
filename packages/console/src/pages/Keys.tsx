import { Badge, Button, Flex, Heading, Link, Table, Text, TextField } from "@radix-ui/themes";
import { useState } from "react";
import type { Api } from "../../../../gen/latchkey/v2/apis_pb.js";
import { mayDo } from "../api.ts";
import { ApiSettings } from "../components/ApiSettings.tsx";
import {
  ErrorNote,
  Field,
  FormDialog,
  SecretOnce,
  TableHead,
  useLoad,
} from "../components/common.tsx";
import { KeyEditor } from "../components/KeyEditor.tsx";
import { KeyOptionsForm, keyFields, NO_OPTIONS } from "../components/key-options.tsx";
import { Pager, usePages } from "../components/paging.tsx";
import type { PageProps } from "../router.tsx";

const PAGE_SIZE = 25;

/** A text that changes whenever one of an API's settings does. */
const settingsKey = (a: Api) =>
  [a.name, a.keyFormat, a.leakPolicy, a.allowedCidrs.join(",")].join("|");

/**
 * An API's keys: searched by externalId on the server, by name or start (prefix) within the
 * page shown; paged; created with every option; each managed in its own dialog. The API's
 * own settings are changed in a dialog of their own.
 */
export function KeysPage({ session, lk, go, apiId }: PageProps & { apiId: string }) {
  const pages = usePages();
  const { cursor } = pages;
  const [externalId, setExternalId] = useState("");
  const [search, setSearch] = useState("");
  const api = useLoad(() => lk.apis.getApi({ apiId }), "read this API", [apiId]);
  const settings = api.data?.data;
  const keys = useLoad(
    () =>
      lk.apis.listKeys({
        apiId,
        limit: PAGE_SIZE,
        cursor,
        externalId: externalId || undefined,
      }),
    "read this API's keys",
    [apiId, cursor, externalId],
  );
  const [options, setOptions] = useState(NO_OPTIONS);
  const [secret, setSecret] = useState<string | null>(null);
  const needle = search.trim().toLowerCase();
  const shown = (keys.data?.data ?? []).filter(
    (k) =>
      !needle ||
      (k.name ?? "").toLowerCase().includes(needle) ||
      k.start.toLowerCase().startsWith(needle) ||
      k.keyId.toLowerCase() === needle,
  );
  return (
    <>
      <Text size="2">
        <Link
          href="/console/apis"
          onClick={(e) => {
            e.preventDefault();
            go("/console/apis");
          }}
        >
          APIs
        </Link>{" "}
        /
      </Text>
      <Flex justify="between" align="center" wrap="wrap" gap="3" mb="4">
        <Heading as="h1">{api.data?.data?.name ?? apiId}</Heading>
        <Flex gap="3" wrap="wrap">
          {settings && mayDo(session, `api.${apiId}.update_api`) && (
            // Keyed by the settings, so that the form starts from what the server answered last.
            <ApiSettings
              key={settingsKey(settings)}
              api={settings}
              lk={lk}
              onChanged={api.reload}
            />
          )}
          {mayDo(session, `api.${apiId}.create_key`) && (
            <FormDialog
              trigger={<Button>Create key</Button>}
              title="Create a key"
              submit="Create key"
              doing="create keys in this API"
              onSubmit={async () => {
                const { data } = await lk.keys.createKey({
                  apiId,
                  ...keyFields(options),
                  prefix: options.prefix || undefined,
                  byteLength: options.byteLength ? Number(options.byteLength) : undefined,
                });
                setOptions(NO_OPTIONS);
                keys.reload();
                if (data) setSecret(data.key);
              }}
            >
              <KeyOptionsForm value={options} onChange={setOptions} creating />
            </FormDialog>
          )}
        </Flex>
      </Flex>
      <ErrorNote message={api.error} />
      <Flex gap="3" wrap="wrap" mb="3" align="end">
        <Field
          label="Search this page by name or start"
          value={search}
          onChange={setSearch}
          placeholder="sk_ab…"
        />
        <Flex direction="column" gap="1">
          <Text as="label" size="2" weight="medium" htmlFor="external-id-filter">
            External id
          </Text>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              const v = new FormData(e.currentTarget).get("externalId");
              pages.reset();
              setExternalId(typeof v === "string" ? v.trim() : "");
            }}
          >
            <Flex gap="2">
              <TextField.Root id="external-id-filter" name="externalId" placeholder="user_123" />
              <Button type="submit" variant="soft">
                Filter
              </Button>
            </Flex>
          </form>
        </Flex>
      </Flex>
      <ErrorNote message={keys.error} />
      {keys.data && shown.length === 0 && <Text color="gray">No keys match.</Text>}
      {shown.length > 0 && (
        <div className="table-scroll">
          <Table.Root variant="surface">
            <TableHead
              caption="Keys"
              columns={["Name", "Start", "Identity", "Credits", "Status"]}
              actions
            />
            <Table.Body>
              {shown.map((k) => (
                <Table.Row key={k.keyId} data-key-id={k.keyId}>
                  <Table.RowHeaderCell>
                    {k.name ?? <Text color="gray">unnamed</Text>}
                  </Table.RowHeaderCell>
                  <Table.Cell>
                    <code>{k.start}</code>
                  </Table.Cell>
                  <Table.Cell>{k.identity?.externalId ?? "—"}</Table.Cell>
                  <Table.Cell>{k.credits?.remaining?.toString() ?? "unlimited"}</Table.Cell>
                  <Table.Cell>
                    {k.enabled ? (
                      <Badge color="green">enabled</Badge>
                    ) : (
                      <Badge color="gray">disabled</Badge>
                    )}
                    {k.expires !== undefined && Number(k.expires) < Date.now() && (
                      <Badge color="red" ml="1">
                        expired
                      </Badge>
                    )}
                  </Table.Cell>
                  <Table.Cell>
                    <KeyEditor keyRow={k} lk={lk} onChanged={keys.reload} onSecret={setSecret} />
                  </Table.Cell>
                </Table.Row>
              ))}
            </Table.Body>
          </Table.Root>
        </div>
      )}
      <Pager pages={pages} pagination={keys.data?.pagination} />
      <SecretOnce secret={secret} onClose={() => setSecret(null)} />
    </>
  );
}
