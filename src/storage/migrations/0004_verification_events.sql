-- Verification events, the store analytics reads: one row per verification, in daily
-- partitions by time (Unix ms, UTC days) that the event writer creates as it needs them.

create table key_verifications (
  time bigint not null,
  workspace_id text not null,
  api_id text,
  key_id text,
  identity_id text,
  external_id text,
  outcome text not null,
  tags text[] not null,
  spent_credits bigint not null,
  request_id text not null
) partition by range (time);

create index key_verifications_workspace_time on key_verifications (workspace_id, time);
create index key_verifications_key_time on key_verifications (key_id, time);
