-- Port of SQLite's 0025: field terms of one or two characters through the index of short terms
-- (issue 23). Each entry's short_grams also holds the grams of from_lc, to_lc and subject_lc
-- again, each with its field's tag ('f:', 't:', 's:', then the gram): `-from:e` is the tsquery
-- `(' ' & !'f:e') | 'grams overflow'`, answered by the GIN index (0024) without reading an entry,
-- and an entry with an empty field holds none of its tagged grams, so a negation keeps it. The
-- view is the grams' definition (storage/inbox.ts: shortGramsOf writes each new entry's), which
-- test/integration checks JS against. The entries written before get theirs from the indexer at
-- start (storage/inbox.ts: addFieldGrams, with 0024's rule for an entry past 500,000 bytes of
-- grams; refilling the column from this view took 1.2 ms of the server's CPU an entry, minutes
-- at 100,000 before the relay could start); until then the searches are exact all the same.
DROP VIEW inbox_grams_source;
CREATE VIEW inbox_grams_source AS
SELECT e.message_seq, (
  SELECT coalesce(array_agg(DISTINCT t.tag || substr(f.t, p.i, n.k)), '{}')
    FROM unnest(ARRAY[e.from_lc, e.to_lc, e.subject_lc, e.snippet_lc], ARRAY['f:', 't:', 's:', NULL]) AS f(t, field_tag),
         generate_series(1, length(f.t)) AS p(i), (VALUES (1), (2)) AS n(k),
         LATERAL (VALUES (''), (f.field_tag)) AS t(tag)
   WHERE p.i + n.k - 1 <= length(f.t) AND t.tag IS NOT NULL
) AS grams
FROM inbox_entries e;
