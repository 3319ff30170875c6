import { Button, Flex, Heading, Table, Text } from "@radix-ui/themes";
import { useState } from "react";
import { when } from "../api.ts";
import { ErrorNote, Field, TableHead, useLoad } from "../components/common.tsx";
import { Pager, usePages } from "../components/paging.tsx";
import type { PageProps } from "../router.tsx";

interface Filters {
  event: string;
  actorId: string;
  resourceId: string;
  resourceType: string;
  since: string;
}
const NONE: Filters = { event: "", actorId: "", resourceId: "", resourceType: "", since: "" };

/** The workspace's audit log, newest first, filtered by event, actor, resource and time. */
export function AuditPage({ lk }: PageProps) {
  const [draft, setDraft] = useState(NONE);
  const [filters, setFilters] = useState(NONE);
  const pages = usePages();
  const { cursor } = pages;
  const logs = useLoad(
    () =>
      lk.analytics.listAuditLogs({
        limit: 50,
        cursor,
        event: filters.event || undefined,
        actorId: filters.actorId || undefined,
        resourceId: filters.resourceId || undefined,
        resourceType: filters.resourceType || undefined,
        start: filters.since ? BigInt(new Date(filters.since).getTime()) : undefined,
      }),
    "read the audit log",
    [filters, cursor],
  );
  const set = (patch: Partial<Filters>) => setDraft({ ...draft, ...patch });
  return (
    <>
      <Heading as="h1" mb="4">
        Audit log
      </Heading>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          pages.reset();
          setFilters(draft);
        }}
      >
        <Flex gap="3" wrap="wrap" align="end" mb="4">
          <Field
            label="Event"
            value={draft.event}
            onChange={(event) => set({ event })}
            placeholder="key.create"
          />
          <Field label="Actor id" value={draft.actorId} onChange={(actorId) => set({ actorId })} />
          <Field
            label="Resource id"
            value={draft.resourceId}
            onChange={(resourceId) => set({ resourceId })}
          />
          <Field
            label="Resource type"
            value={draft.resourceType}
            onChange={(resourceType) => set({ resourceType })}
            placeholder="key"
          />
          <Field
            label="Since"
            type="datetime-local"
            value={draft.since}
            onChange={(since) => set({ since })}
          />
          <Button type="submit">Apply filters</Button>
        </Flex>
      </form>
      <ErrorNote message={logs.error} />
      {logs.data?.data.length === 0 && <Text color="gray">No records match.</Text>}
      {(logs.data?.data.length ?? 0) > 0 && (
        <div className="table-scroll">
          <Table.Root variant="surface">
            <TableHead
              caption="Audit records"
              columns={["Time", "Event", "Actor", "Resource", "Description"]}
            />
            <Table.Body>
              {logs.data?.data.map((a) => (
                <Table.Row key={a.id}>
                  <Table.Cell>{when(a.time)}</Table.Cell>
                  <Table.RowHeaderCell>
                    <code>{a.event}</code>
                  </Table.RowHeaderCell>
                  <Table.Cell>
                    <code>{a.actor?.id}</code>
                  </Table.Cell>
                  <Table.Cell>
                    {a.resource?.type} <code>{a.resource?.id}</code>
                  </Table.Cell>
                  <Table.Cell>{a.description}</Table.Cell>
                </Table.Row>
              ))}
            </Table.Body>
          </Table.Root>
        </div>
      )}
      <Pager pages={pages} pagination={logs.data?.pagination} />
    </>
  );
}
