-- Webhooks: endpoints per workspace, the outbox of deliveries (one row per event and
-- endpoint, written in the transaction of the change it describes), their attempts, and the
-- durable cursors of the background passes that derive events (key expiry, credit ledger).

create table webhook_endpoints (
  id text primary key,
  workspace_id text not null references workspaces (id),
  url text not null,
  description text,
  event_types text[] not null,
  credits_low_threshold bigint,
  enabled boolean not null,
  -- Set when Latchkey disabled the endpoint for failing; cleared when it is enabled again.
  disabled_reason text,
  -- The signing secrets in their stored form (encrypted under WEBHOOK_SECRETS_KEY when set):
  -- the current one, and the one rotated out while its grace lasts.
  secret text not null,
  previous_secret text,
  previous_secret_expires_at bigint,
  -- Since when every attempt has failed (null while the endpoint answers 2xx).
  failing_since bigint,
  created_at bigint not null,
  updated_at bigint
);

-- Pages of a workspace's endpoints, and the fan-out of an event to the workspace's endpoints.
create index webhook_endpoints_workspace on webhook_endpoints (workspace_id, id);

create table webhook_deliveries (
  -- The `webhook-id` header: the same on every attempt and on a redelivery.
  id text primary key,
  workspace_id text not null,
  endpoint_id text not null references webhook_endpoints (id) on delete cascade,
  event_type text not null,
  -- The body exactly as it is signed and sent.
  payload text not null,
  status text not null check (status in ('pending', 'delivered', 'failed')),
  created_at bigint not null,
  -- Due time of the next attempt while pending; a claimed delivery's lease ends here.
  next_attempt_at bigint,
  -- Attempts since the delivery was made or last redelivered (the exponent of the backoff),
  -- and from when its retry window runs.
  attempts int not null default 0,
  retry_from bigint not null,
  -- Events that must be sent at most once per something (ratelimit.exceeded: per key, limit
  -- and window) carry a key; a second row with one key for one endpoint is never written.
  dedupe_key text
);

-- The dispatcher finds the endpoints with pending deliveries (one probe per endpoint) and
-- claims each one's due deliveries in due order.
create index webhook_deliveries_due on webhook_deliveries (endpoint_id, next_attempt_at)
  where status = 'pending';
-- Pages of an endpoint's deliveries, newest first; retention deletes by age.
create index webhook_deliveries_endpoint on webhook_deliveries (endpoint_id, created_at, id);
create index webhook_deliveries_created on webhook_deliveries using brin (created_at);
create unique index webhook_deliveries_dedupe on webhook_deliveries (endpoint_id, dedupe_key)
  where dedupe_key is not null;

create table webhook_attempts (
  delivery_id text not null references webhook_deliveries (id) on delete cascade,
  at bigint not null,
  status text not null check (status in ('delivered', 'failed', 'error')),
  response_status int,
  latency_ms int not null,
  error text,
  next_retry_at bigint
);

create index webhook_attempts_delivery on webhook_attempts (delivery_id, at);

-- Where each background pass has got to: 'key.expired' (an expiry instant and key id) and
-- 'credits' (a transaction id and ledger sequence). A pass takes its row `for update skip
-- locked`, so one process at a time runs it, and moves it in the transaction that writes
-- the deliveries it derived: a restart or another process never emits twice.
create table webhook_cursors (
  name text primary key,
  position text
);

insert into webhook_cursors (name, position) values ('key.expired', null), ('credits', null);

-- The expiry pass reads keys in expiry order after its cursor.
create index keys_expires on keys (expires_at, id) where expires_at is not null;

-- The credit events pass reads ledger entries in commit order: the writing transaction's id
-- (every transaction below the oldest running one has ended, so the pass never passes an
-- entry that is still to commit) and a sequence within it. Added without a rewrite: entries
-- written before this migration have neither and are never read by the pass.
create sequence credit_ledger_seq;
alter table credit_ledger add column tx xid8;
alter table credit_ledger add column seq bigint;
alter table credit_ledger alter column tx set default pg_current_xact_id();
alter table credit_ledger alter column seq set default nextval('credit_ledger_seq');
create index credit_ledger_tx on credit_ledger (tx, seq) where tx is not null;
