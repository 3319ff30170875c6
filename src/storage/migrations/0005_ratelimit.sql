-- Rate-limit namespaces, overrides, and rate-limit decision events (analytics reads them).

create table ratelimit_namespaces (
  id text primary key,
  workspace_id text not null references workspaces (id),
  name text not null,
  created_at bigint not null,
  updated_at bigint,
  deleted_at bigint
);

create unique index ratelimit_namespaces_name on ratelimit_namespaces (workspace_id, name);

create table ratelimit_overrides (
  id text primary key,
  workspace_id text not null references workspaces (id),
  namespace_id text not null references ratelimit_namespaces (id),
  -- An identifier, or a pattern where * matches any characters.
  identifier text not null,
  window_limit bigint not null,
  duration_ms bigint not null,
  created_at bigint not null,
  updated_at bigint,
  deleted_at bigint
);

-- One override per identifier; setting a deleted one again revives its row.
create unique index ratelimit_overrides_identifier on ratelimit_overrides (namespace_id, identifier);
create index ratelimit_overrides_namespace on ratelimit_overrides (namespace_id, id) where deleted_at is null;

create table ratelimit_events (
  time bigint not null,
  workspace_id text not null,
  namespace_id text not null,
  identifier text not null,
  passed boolean not null,
  cost bigint not null,
  window_limit bigint not null,
  duration_ms bigint not null,
  remaining bigint not null,
  override_id text,
  request_id text not null
) partition by range (time);

create index ratelimit_events_workspace_time on ratelimit_events (workspace_id, time);
