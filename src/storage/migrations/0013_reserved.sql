-- Number 13 is taken by a change made beside this one; this file only keeps the sequence
-- whole until the two meet, and is replaced by that migration then.
select 1;
