-- Port of SQLite's 0020: search terms of one or two characters through an index (trigrams, 0014,
-- cannot hold them). short_grams holds every distinct one- and two-character substring (code
-- points) of an entry's lower-cased search fields (never across two fields), written with the
-- entry by storage/inbox.ts (computed in JS: the SQL below costs a millisecond an entry); a GIN
-- index over it finds the entries holding a short term, which storage/inbox.ts still checks with
-- strpos() on the fields the term names. The view is their definition, which test/unit checks
-- JS against, and fills the column once for the entries written before this migration.
ALTER TABLE inbox_entries ADD COLUMN short_grams TEXT[] NOT NULL DEFAULT '{}';

CREATE VIEW inbox_grams_source AS
SELECT e.message_seq, (
  SELECT coalesce(array_agg(DISTINCT substr(f.t, p.i, n.k)), '{}')
    FROM unnest(ARRAY[e.from_lc, e.to_lc, e.subject_lc, e.snippet_lc]) AS f(t),
         generate_series(1, length(f.t)) AS p(i), (VALUES (1), (2)) AS n(k)
   WHERE p.i + n.k - 1 <= length(f.t)
) AS grams
FROM inbox_entries e;

UPDATE inbox_entries e SET short_grams = s.grams FROM inbox_grams_source s WHERE s.message_seq = e.message_seq;

CREATE INDEX inbox_short_grams ON inbox_entries USING gin (short_grams);
