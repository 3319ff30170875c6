-- Credits held by keys.verifyKey with `credits.reserve` until keys.settleCredits charges what
-- was used and gives the rest back. The amount is taken from the balances when the
-- reservation is made (in the same transaction as this row), so a row only says what to give
-- back: key_charged says the key's balance was charged (the key a reroll moved it to is
-- followed when settling), identity_id names the pool that was charged (null: none).
-- api_id is the API whose verify_key permission settles it. Times are Unix milliseconds from
-- the application clock; a row unsettled at expires_at is settled in full by the sweep (or by
-- the settle that finds it so). settled_at and the columns after it are the settlement, so a
-- repeat answers the same and moves nothing. No foreign keys: a key deleted meanwhile leaves
-- a reservation that still settles (there is then no balance to give back to), and a settled
-- row is deleted a day later by the sweep.
create table credit_reservations (
  id text primary key,
  workspace_id text not null,
  api_id text not null,
  key_id text not null,
  key_charged boolean not null,
  identity_id text,
  amount bigint not null check (amount > 0),
  created_at bigint not null,
  expires_at bigint not null,
  settled_at bigint,
  used bigint,
  refunded bigint,
  shortfall bigint,
  remaining bigint,
  identity_remaining bigint,
  expired boolean
);

-- What the sweep looks for: unsettled rows by expiry, and settled rows by age.
create index credit_reservations_unsettled on credit_reservations (expires_at)
  where settled_at is null;
create index credit_reservations_settled on credit_reservations (settled_at)
  where settled_at is not null;
