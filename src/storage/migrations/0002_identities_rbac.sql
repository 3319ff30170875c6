-- Identities with their rate limits, and role-based access control (permissions, roles).

create table identities (
  id text primary key,
  workspace_id text not null references workspaces (id),
  external_id text not null,
  meta jsonb,
  created_at bigint not null,
  updated_at bigint,
  deleted_at bigint
);

-- Deleted identities keep their externalId reserved, so the
-- unique index covers them too.
create unique index identities_external_id on identities (workspace_id, external_id);
create index identities_workspace on identities (workspace_id, id);

-- Rate-limit configurations of identities now, and of keys (key_id) from the keys migration.
create table ratelimits (
  id text primary key,
  workspace_id text not null references workspaces (id),
  identity_id text references identities (id) on delete cascade,
  key_id text,
  name text not null,
  window_limit bigint not null,
  duration_ms bigint not null,
  auto_apply boolean not null,
  created_at bigint not null,
  updated_at bigint,
  check ((identity_id is null) <> (key_id is null))
);

create unique index ratelimits_identity_name on ratelimits (identity_id, name) where identity_id is not null;
create unique index ratelimits_key_name on ratelimits (key_id, name) where key_id is not null;

create table permissions (
  id text primary key,
  workspace_id text not null references workspaces (id),
  name text not null,
  slug text not null,
  description text,
  created_at bigint not null,
  updated_at bigint
);

create unique index permissions_slug on permissions (workspace_id, slug);
create index permissions_workspace on permissions (workspace_id, id);

create table roles (
  id text primary key,
  workspace_id text not null references workspaces (id),
  name text not null,
  description text,
  created_at bigint not null,
  updated_at bigint
);

create unique index roles_name on roles (workspace_id, name);
create index roles_workspace on roles (workspace_id, id);

-- Deleting a role or a permission removes its links (and the keys migration links keys the same way).
create table roles_permissions (
  role_id text not null references roles (id) on delete cascade,
  permission_id text not null references permissions (id) on delete cascade,
  workspace_id text not null,
  created_at bigint not null,
  primary key (role_id, permission_id)
);

create index roles_permissions_permission on roles_permissions (permission_id);
