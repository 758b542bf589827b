-- Field terms of one or two characters through the index of short terms (issue 23): `-from:e`,
-- `-to:x`, `-subject:ab` checked every entry, since an entry's grams (0020) say which short
-- substrings it holds somewhere, not in which field. Each entry now also holds the grams of
-- from_lc, to_lc and subject_lc (the fields a term can name) again, each with its field's tag
-- ('f:', 't:', 's:', then the gram): `-from:e` is the FTS5 query `" " NOT "f:e"` (hex tokens),
-- answered by merging two posting lists (every entry holds " ": storage/inbox.ts says why), and
-- an entry with an empty field holds none of its tagged grams, so a negation keeps it. A tagged
-- gram has three or four code points, a free-text one one or two: they never meet.
-- storage/inbox.ts (shortGramsOf) writes each new entry's grams; the view is their definition,
-- which test/integration checks JS against. The entries written before get theirs from the
-- indexer at start, in batches between captures (storage/inbox.ts: addFieldGrams; refilling the
-- index from this view took 0.5 ms of CPU an entry, most of a minute at 100,000 entries before
-- the relay could start); until then the searches are exact all the same (addFieldGrams says why).
DROP VIEW inbox_grams_source;
CREATE VIEW inbox_grams_source AS
SELECT e.message_seq, (
  SELECT group_concat(g, ' ') FROM (
    SELECT DISTINCT hex(t.tag || substr(f.value, p.key + 1, n.value)) AS g
      FROM json_each(json_array(e.from_lc, e.to_lc, e.subject_lc, e.snippet_lc)) f,
           json_each('[' || rtrim(replace(hex(zeroblob(length(f.value))), '00', '0,'), ',') || ']') p,
           json_each('[1,2]') n,
           (SELECT NULL AS field, '' AS tag UNION ALL SELECT 0, 'f:' UNION ALL SELECT 1, 't:' UNION ALL SELECT 2, 's:') t
     WHERE p.key + n.value <= length(f.value) AND (t.field IS NULL OR t.field = f.key)
  )
) AS grams
FROM inbox_entries e;
