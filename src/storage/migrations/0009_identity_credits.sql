-- An identity's credit pool: a balance every key of the identity spends from, besides the
-- key's own credits. The columns mean what they mean on keys: remaining null is unlimited,
-- refill_day null with a refill_amount is a daily refill, last_refill_at the boundary the
-- balance was last refilled at (refills are applied lazily by whoever reads or spends first).
alter table identities add column remaining bigint;
alter table identities add column refill_amount bigint;
alter table identities add column refill_day int;
alter table identities add column last_refill_at bigint;
alter table identities add constraint identities_remaining_check
  check (remaining is null or remaining >= 0);
alter table identities add constraint identities_refill_check
  check (refill_amount is null or remaining is not null);
