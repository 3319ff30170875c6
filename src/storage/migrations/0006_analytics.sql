-- Rollups of key_verifications by minute, hour, day and month (UTC), kept current by the event
-- writer in the transaction that inserts the raw events, so reads never recompute them. One
-- row per group; identity and key may be null (nulls not distinct keeps one row per group).

create table verifications_per_minute (
  time timestamptz not null,
  workspace_id text not null,
  api_id text,
  key_id text,
  identity_id text,
  external_id text,
  outcome text not null,
  tags text[] not null,
  count bigint not null,
  spent_credits bigint not null
) partition by range (time);

create unique index verifications_per_minute_group on verifications_per_minute
  (workspace_id, time, api_id, key_id, identity_id, outcome, tags) nulls not distinct;
create index verifications_per_minute_api on verifications_per_minute (workspace_id, api_id, time);

create table verifications_per_hour (like verifications_per_minute);
create unique index verifications_per_hour_group on verifications_per_hour
  (workspace_id, time, api_id, key_id, identity_id, outcome, tags) nulls not distinct;
create index verifications_per_hour_api on verifications_per_hour (workspace_id, api_id, time);

create table verifications_per_day (like verifications_per_minute);
create unique index verifications_per_day_group on verifications_per_day
  (workspace_id, time, api_id, key_id, identity_id, outcome, tags) nulls not distinct;
create index verifications_per_day_api on verifications_per_day (workspace_id, api_id, time);

create table verifications_per_month (like verifications_per_minute);
create unique index verifications_per_month_group on verifications_per_month
  (workspace_id, time, api_id, key_id, identity_id, outcome, tags) nulls not distinct;
create index verifications_per_month_api on verifications_per_month (workspace_id, api_id, time);

-- Audit reading filters by workspace and pages newest first.
create index audit_logs_workspace_id on audit_logs (workspace_id, id desc);
