-- The credit ledger: one row per balance per statement or transaction that moved it, written
-- in that same statement or transaction, so a statement of any range sums exactly to the moves
-- acknowledged in it. subject_id is the key holding a balance (a rerolled key's balance is held
-- by the key it was rerolled into) or the identity of a pool; a key without credits of its own
-- that spends its identity's pool also gets the charge under its own id. `at` is the instant
-- of the move (Unix ms, the application clock). spent is what was charged (negative for what a
-- settlement gave back), refilled what refills added, adjusted the manual changes (signed).
-- Rows are only appended (no upsert, so concurrent writers never contend on one row) and
-- removed by the retention pass once older than CREDIT_LEDGER_RETENTION_DAYS.
create table credit_ledger (
  workspace_id text not null,
  subject_id text not null,
  at bigint not null,
  spent bigint not null,
  refilled bigint not null,
  adjusted bigint not null
);

-- A statement reads one subject's rows over a range of time.
create index credit_ledger_subject_at on credit_ledger (subject_id, at);
-- The retention pass deletes by age: rows arrive in about time order, which a BRIN index
-- covers at a fraction of a b-tree's cost on every insert.
create index credit_ledger_at on credit_ledger using brin (at);
