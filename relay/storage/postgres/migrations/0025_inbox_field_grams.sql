-- Port of SQLite's 0025: field terms of one or two characters through the index of short terms
-- (issue 23). Each entry's short_grams also holds the grams of from_lc, to_lc and subject_lc
-- again, each with its field's tag ('f:', 't:', 's:', then the gram): `-from:e` is the tsquery
-- `(' ' & !'f:e') | 'grams overflow'`, answered by the GIN index (0024) without reading an entry,
-- and an entry with an empty field holds none of its tagged grams, so a negation keeps it. The
-- view is the grams' definition (storage/inbox.ts: shortGramsOf writes each new entry's), which
-- test/integration checks JS against, and refills the column for the entries written before,
-- with 0024's rule for an entry past 500,000 bytes of grams.
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

DROP INDEX inbox_short_grams;
UPDATE inbox_entries e SET short_grams = array_to_tsvector(
  CASE WHEN octet_length(array_to_string(s.grams, '')) > 500000 THEN ARRAY[' ', 'grams overflow'] ELSE s.grams END
) FROM inbox_grams_source s WHERE s.message_seq = e.message_seq;
CREATE INDEX inbox_short_grams ON inbox_entries USING gin (short_grams);
