-- Keys and their links to permissions and roles.

create table keys (
  id text primary key,
  workspace_id text not null references workspaces (id),
  api_id text not null references apis (id),
  -- base64 SHA-256 of the full secret; unique across workspaces (a deleted key keeps its hash).
  hash text not null unique,
  start text not null,
  -- Kept to reroll a key with the same shape.
  prefix text,
  byte_length int,
  name text,
  identity_id text references identities (id),
  meta jsonb,
  expires_at bigint,
  enabled boolean not null,
  -- Credits: remaining null means unlimited; refill_day null with refill_amount means daily.
  remaining bigint,
  refill_amount bigint,
  refill_day int,
  last_refill_at bigint,
  -- After a reroll the old key spends the balance of the key it was replaced by.
  credits_key_id text references keys (id) on delete set null,
  migration_id text,
  created_at bigint not null,
  updated_at bigint,
  last_used_at bigint,
  deleted_at bigint,
  check (remaining is null or remaining >= 0),
  check (refill_amount is null or remaining is not null or credits_key_id is not null)
);

-- Keyset pagination of an API's live keys, and lookups by identity.
create index keys_api on keys (api_id, id) where deleted_at is null;
create index keys_identity on keys (identity_id) where identity_id is not null;
create index keys_credits_key on keys (credits_key_id) where credits_key_id is not null;

alter table ratelimits
  add constraint ratelimits_key_fk foreign key (key_id) references keys (id) on delete cascade;

create table keys_permissions (
  key_id text not null references keys (id) on delete cascade,
  permission_id text not null references permissions (id) on delete cascade,
  workspace_id text not null,
  created_at bigint not null,
  primary key (key_id, permission_id)
);

create index keys_permissions_permission on keys_permissions (permission_id);

create table keys_roles (
  key_id text not null references keys (id) on delete cascade,
  role_id text not null references roles (id) on delete cascade,
  workspace_id text not null,
  created_at bigint not null,
  primary key (key_id, role_id)
);

create index keys_roles_role on keys_roles (role_id);
