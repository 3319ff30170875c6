import { Button, Flex, Heading, Table, Text, TextField } from "@radix-ui/themes";
import { useState } from "react";
import { ErrorNote, Field, FormDialog, TableHead, useLoad } from "../components/common.tsx";
import { msOf } from "../components/key-options.tsx";
import type { PageProps } from "../router.tsx";

/**
 * A rate-limit namespace's overrides: list, set, delete. Namespaces are made by their first
 * `ratelimit.limit` call and the API lists none, so the namespace is named here.
 */
export function RatelimitPage({ lk }: PageProps) {
  const [namespace, setNamespace] = useState("");
  return (
    <>
      <Heading as="h1" mb="4">
        Rate limits
      </Heading>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const v = new FormData(e.currentTarget).get("namespace");
          setNamespace(typeof v === "string" ? v.trim() : "");
        }}
      >
        <Flex gap="2" align="end" wrap="wrap" mb="4">
          <Flex direction="column" gap="1">
            <Text as="label" size="2" weight="medium" htmlFor="namespace">
              Namespace (name or id)
            </Text>
            <TextField.Root id="namespace" name="namespace" placeholder="email.outbound" />
          </Flex>
          <Button type="submit" variant="soft">
            Show overrides
          </Button>
        </Flex>
      </form>
      {namespace && <Overrides key={namespace} namespace={namespace} lk={lk} />}
    </>
  );
}

function Overrides({ namespace, lk }: { namespace: string; lk: PageProps["lk"] }) {
  const list = useLoad(
    () => lk.ratelimit.listOverrides({ namespace, limit: 100 }),
    `read the overrides of ${namespace}`,
    [namespace],
  );
  const [o, setO] = useState({ identifier: "", limit: "", durationS: "" });
  return (
    <>
      <Flex justify="between" align="center" mb="2">
        <Heading as="h2" size="4">
          Overrides of {namespace}
        </Heading>
        <FormDialog
          trigger={<Button>Set override</Button>}
          title={`Set an override in ${namespace}`}
          submit="Save"
          doing="set overrides"
          onSubmit={async () => {
            await lk.ratelimit.setOverride({
              namespace,
              identifier: o.identifier,
              limit: BigInt(o.limit || "0"),
              duration: msOf(o.durationS),
            });
            setO({ identifier: "", limit: "", durationS: "" });
            list.reload();
          }}
        >
          <Field
            label="Identifier"
            value={o.identifier}
            onChange={(identifier) => setO({ ...o, identifier })}
            hint="exact, or with * wildcards"
            required
          />
          <Field
            label="Limit"
            type="number"
            value={o.limit}
            onChange={(limit) => setO({ ...o, limit })}
            hint="0 always denies"
          />
          <Field
            label="Window (seconds)"
            type="number"
            value={o.durationS}
            onChange={(durationS) => setO({ ...o, durationS })}
          />
        </FormDialog>
      </Flex>
      <ErrorNote message={list.error} />
      {list.data?.data.length === 0 && <Text color="gray">No overrides.</Text>}
      {(list.data?.data.length ?? 0) > 0 && (
        <Table.Root variant="surface">
          <TableHead caption="Overrides" columns={["Identifier", "Limit", "Window"]} actions />
          <Table.Body>
            {list.data?.data.map((r) => (
              <Table.Row key={r.overrideId}>
                <Table.RowHeaderCell>
                  <code>{r.identifier}</code>
                </Table.RowHeaderCell>
                <Table.Cell>{r.limit.toString()}</Table.Cell>
                <Table.Cell>{Number(r.duration) / 1000}s</Table.Cell>
                <Table.Cell>
                  <Button
                    size="1"
                    variant="soft"
                    color="red"
                    aria-label={`Delete override ${r.identifier}`}
                    onClick={() =>
                      void lk.ratelimit
                        .deleteOverride({ namespace, identifier: r.identifier })
                        .then(list.reload, list.reload)
                    }
                  >
                    Delete
                  </Button>
                </Table.Cell>
              </Table.Row>
            ))}
          </Table.Body>
        </Table.Root>
      )}
    </>
  );
}
