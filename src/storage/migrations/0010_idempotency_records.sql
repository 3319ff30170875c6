-- Outcomes of requests sent with an idempotencyKey (keys.verifyKey, keys.updateCredits), so a
-- repeat within 24 hours answers what the first call answered and charges nothing.
-- One key per workspace: the primary key is what makes two racing first calls take turns (the
-- second insert waits on the index until the first commits, then conflicts and reads the
-- outcome). request_hash is the SHA-256 of the procedure and its request without the key, so
-- a repeat with another body is told apart. answer is the answer's data as protobuf JSON,
-- null only inside the claiming transaction (which writes it before it commits);
-- created_at is Unix milliseconds from the application clock. A record older than 24 hours
-- counts as absent and the retention pass deletes it (a bounded batch at a time, oldest
-- first, by the created_at index). No foreign key to workspaces: a record is short-lived, and
-- a key-share lock on the workspace row per insert would make every idempotent call of a
-- workspace contend on that row.
create table idempotency_records (
  workspace_id text not null,
  idempotency_key text not null,
  request_hash text not null,
  answer text,
  created_at bigint not null,
  primary key (workspace_id, idempotency_key)
);

create index idempotency_records_created_at on idempotency_records (created_at);
