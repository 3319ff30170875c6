-- A key's hash is unique within its workspace, not across the instance. Unique across the
-- instance, a hash told one tenant whether another held the same secret (migrateKeys refused
-- it as taken), and a lookup by hash alone could find another tenant's key. Every lookup by
-- hash now names the workspace (or an API, which belongs to one), and this index serves it.
-- A deleted key keeps its hash, so its workspace cannot import that secret again.
create unique index keys_workspace_hash on keys (workspace_id, hash);

alter table keys drop constraint keys_hash_key;
