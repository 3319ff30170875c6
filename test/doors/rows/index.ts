import type { Row } from "../row.js";
import { ANALYTICS_ROWS } from "./analytics.js";
import { API_ROWS } from "./apis.js";
import { IDENTITY_ROWS } from "./identities.js";
import { KEY_GRANT_ROWS, KEY_UPDATE_ROWS } from "./key-changes.js";
import { KEY_CREATION_ROWS, KEY_READING_ROWS } from "./keys.js";
import { LIVENESS_ROWS } from "./liveness.js";
import { PERMISSION_ROWS, ROLE_ROWS } from "./permissions.js";
import { LIMIT_ROWS, OVERRIDE_ROWS } from "./ratelimit.js";
import { WEBHOOK_ROWS } from "./webhooks.js";

/** The table: every procedure's representative calls, by namespace. */
export const ROWS: Row[] = [
  ...LIVENESS_ROWS,
  ...API_ROWS,
  ...KEY_CREATION_ROWS,
  ...KEY_READING_ROWS,
  ...KEY_UPDATE_ROWS,
  ...KEY_GRANT_ROWS,
  ...IDENTITY_ROWS,
  ...PERMISSION_ROWS,
  ...ROLE_ROWS,
  ...LIMIT_ROWS,
  ...OVERRIDE_ROWS,
  ...ANALYTICS_ROWS,
  ...WEBHOOK_ROWS,
];
