-- Rollup groups are unique by a digest of their tags, not by the tags themselves. A
-- verification may carry 20 tags of 512 characters (up to 40 kB of text): a B-tree entry
-- holds at most about 2.7 kB, so an index over the tags array refused such a group, and with
-- it the whole batch of events being written. The digest is 32 bytes whatever the tags.
--
-- SHA-256 of the array's text form: that form quotes every element that needs it, so two
-- different arrays never share a text (and the digest is collision-resistant on top). The
-- writer sorts a group's tags before it reaches the database, so equal sets meet in one row.
-- array_out is only "stable" because an array of some other type may print differently under
-- other settings; for text[] the result depends on nothing but the value, hence "immutable",
-- which a generated column requires.
create function rollup_tags_digest(tags text[]) returns bytea
  language sql
  immutable
  strict
  parallel safe
  return sha256(convert_to(tags::text, 'UTF8'));

-- Adding a stored generated column computes it for every existing row (the rollups hold one
-- row per group, far fewer than the raw events). On the partitioned minute rollup the
-- column reaches every partition.
alter table verifications_per_minute
  add column tags_digest bytea not null generated always as (rollup_tags_digest(tags)) stored;
alter table verifications_per_hour
  add column tags_digest bytea not null generated always as (rollup_tags_digest(tags)) stored;
alter table verifications_per_day
  add column tags_digest bytea not null generated always as (rollup_tags_digest(tags)) stored;
alter table verifications_per_month
  add column tags_digest bytea not null generated always as (rollup_tags_digest(tags)) stored;

-- The old indexes held every existing group, so the groups are already distinct by digest.
drop index verifications_per_minute_group;
create unique index verifications_per_minute_group on verifications_per_minute
  (workspace_id, time, api_id, key_id, identity_id, outcome, tags_digest) nulls not distinct;
drop index verifications_per_hour_group;
create unique index verifications_per_hour_group on verifications_per_hour
  (workspace_id, time, api_id, key_id, identity_id, outcome, tags_digest) nulls not distinct;
drop index verifications_per_day_group;
create unique index verifications_per_day_group on verifications_per_day
  (workspace_id, time, api_id, key_id, identity_id, outcome, tags_digest) nulls not distinct;
drop index verifications_per_month_group;
create unique index verifications_per_month_group on verifications_per_month
  (workspace_id, time, api_id, key_id, identity_id, outcome, tags_digest) nulls not distinct;
