-- Foundation: workspaces, root keys, APIs and the audit log.
-- Times are Unix milliseconds (bigint) taken from the application clock, so tests can move time.

create table workspaces (
  id text primary key,
  name text not null,
  is_default boolean not null default false,
  created_at bigint not null,
  deleted_at bigint
);

-- At most one default workspace: ROOT_KEY and the first-start root key live there.
create unique index workspaces_one_default on workspaces (is_default) where is_default;

create table root_keys (
  id text primary key,
  workspace_id text not null references workspaces (id),
  hash text not null unique,
  start text not null,
  name text,
  permissions text[] not null,
  created_at bigint not null,
  expires_at bigint,
  revoked_at bigint
);

create index root_keys_workspace on root_keys (workspace_id, id);

create table apis (
  id text primary key,
  workspace_id text not null references workspaces (id),
  name text not null,
  created_at bigint not null,
  updated_at bigint,
  deleted_at bigint
);

create index apis_workspace on apis (workspace_id, id);

create table audit_logs (
  id bigint generated always as identity primary key,
  workspace_id text not null,
  time bigint not null,
  event text not null,
  actor_type text not null,
  actor_id text not null,
  resource_type text not null,
  resource_id text not null,
  description text not null,
  request_id text,
  correlation_id text
);

create index audit_logs_workspace_time on audit_logs (workspace_id, time, id);
