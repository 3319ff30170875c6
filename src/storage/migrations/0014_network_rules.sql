-- Network rules: the address ranges (CIDR text, validated when written) a key's verifications
-- must come from. A key's own list replaces its API's, which is the default of the API's keys.
-- Null means no rule; a list is never empty (the procedures store "none" as null).
alter table keys
  add column allowed_cidrs text[],
  add constraint keys_allowed_cidrs_bounded
    check (allowed_cidrs is null or cardinality(allowed_cidrs) between 1 and 100);

alter table apis
  add column allowed_cidrs text[],
  add constraint apis_allowed_cidrs_bounded
    check (allowed_cidrs is null or cardinality(allowed_cidrs) between 1 and 100);
