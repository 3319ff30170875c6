import type { TestServer } from "../../harness/server.js";
import type { Api } from "../../harness/typed.js";

/** A URL nothing listens on: deliveries to it fail, which these tests never wait for. */
export const UNUSED_URL = "http://127.0.0.1:9/hook";

/** Creates an endpoint through the typed client; answers its id and secret. */
export async function newEndpoint(
  s: TestServer,
  eventTypes: string[] = ["key.created"],
  api: Api = s.api,
): Promise<{ id: string; secret: string }> {
  const made = await api.webhooks.createEndpoint({ url: UNUSED_URL, eventTypes });
  return { id: made.data?.endpoint?.id as string, secret: made.data?.secret as string };
}

/** The audit events of a request, in order. */
export async function auditOf(s: TestServer, requestId: string | undefined): Promise<string[]> {
  const rows = await s.db.query<{ event: string }>(
    "select event from audit_logs where request_id = $1 order by id",
    [requestId],
  );
  return rows.map((r) => r.event);
}

/** A server config for these tests: private URLs allowed, nothing delivered quickly. */
export const CONFIG = { webhookAllowPrivate: true, webhookRetryBaseMs: 3_600_000 };
