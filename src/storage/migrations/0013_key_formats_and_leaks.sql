-- Key formats and leak reports.
--
-- An API says how its new keys are written (key_format) and what a reported leak of one of
-- them does (leak_policy). APIs that exist before this migration keep the format their keys
-- have always had, plain; an API created afterwards gets checksummed unless it asks otherwise
-- (the application writes both columns on every insert, so these defaults are for old rows).
alter table apis
  add column key_format text not null default 'plain'
    check (key_format in ('plain', 'checksummed')),
  add column leak_policy text not null default 'disable'
    check (leak_policy in ('revoke', 'disable', 'notify'));

-- A secret-scanning report names a secret, not a workspace: its hash is looked up across
-- workspaces (hashes are unique per workspace only, so one secret may be a key of several).
create index keys_hash on keys (hash);

-- One row per leak of a key reported at one place (source and URL): a report seen before
-- changes nothing again, so a partner sending the same report twice is harmless. digest is
-- the SHA-256 of source and URL (a URL can be longer than an index entry may be). The policy
-- is the one applied then; a key deleted for good takes its reports along.
create table key_leaks (
  key_id text not null references keys (id) on delete cascade,
  digest text not null,
  workspace_id text not null,
  api_id text not null,
  source text not null,
  url text not null,
  policy text not null check (policy in ('revoke', 'disable', 'notify')),
  reported_at bigint not null,
  primary key (key_id, digest)
);
