-- Sessions of the web console (/console). A row is made only by a successful sign-in with a
-- root key and holds that root key's id, never the key: every call made with the session
-- reads the root key's current row, so a revoked, expired or narrowed root key takes effect
-- on the session's next call. id is the SHA-256 (base64url) of the secret in the browser's
-- cookie, so a copy of this table opens no session. Times are Unix milliseconds from the
-- application clock: last_seen_at moves with use (idle expiry), expires_at is fixed at
-- sign-in (absolute lifetime). No foreign key: the environment's ROOT_KEY has no row.
create table console_sessions (
  id text primary key,
  root_key_id text not null,
  workspace_id text not null,
  created_at bigint not null,
  last_seen_at bigint not null,
  expires_at bigint not null
);

-- A root key's sessions, oldest use first: the bound per root key removes from there.
create index console_sessions_root_key on console_sessions (root_key_id, last_seen_at);
-- What the hourly retention pass deletes: sessions idle too long or past their lifetime.
create index console_sessions_last_seen on console_sessions (last_seen_at);
create index console_sessions_expires on console_sessions (expires_at);
