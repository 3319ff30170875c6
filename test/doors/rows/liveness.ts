import { ok, type Row } from "../row.js";

export const LIVENESS_ROWS: Row[] = [
  ok("liveness.check", "answers without a root key", async () => ({ body: {}, auth: null })),
];
