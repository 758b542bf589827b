-- Search terms of one or two characters through an index (issue 23). The trigram index (0007)
-- cannot hold them: they used to scan every entry, which a rare one did to the end. inbox_grams
-- holds, per entry, every distinct one- and two-character substring of its lower-cased search
-- fields (never across two fields), each as the hex of its UTF-8 bytes: one token per substring
-- for the ASCII tokenizer, so a term of one or two characters is one token, looked up exactly and
-- walked newest first (rowid is the entry's message_seq). It finds the entries that hold the term
-- in some field; storage/inbox.ts still checks the term with instr() on the fields it names, so
-- the results are those of the scan it replaces. Contentless, rowids only (detail=none).
-- storage/inbox.ts writes each new entry's grams (computed in JS: this SQL costs a millisecond an
-- entry, JS a few microseconds); the view below is their definition, which test/unit checks JS
-- against, and fills the index once for the entries written before this migration.
CREATE VIRTUAL TABLE inbox_grams USING fts5(
  grams, content = '', contentless_delete = 1, tokenize = 'ascii', detail = 'none'
);

-- Each field's positions come from a JSON array of its length (json_each's key): SQLite has no
-- generate_series.
CREATE VIEW inbox_grams_source AS
SELECT e.message_seq, (
  SELECT group_concat(g, ' ') FROM (
    SELECT DISTINCT hex(substr(f.value, p.key + 1, n.value)) AS g
      FROM json_each(json_array(e.from_lc, e.to_lc, e.subject_lc, e.snippet_lc)) f,
           json_each('[' || rtrim(replace(hex(zeroblob(length(f.value))), '00', '0,'), ',') || ']') p,
           json_each('[1,2]') n
     WHERE p.key + n.value <= length(f.value)
  )
) AS grams
FROM inbox_entries e;

INSERT INTO inbox_grams (rowid, grams) SELECT message_seq, grams FROM inbox_grams_source;

CREATE TRIGGER inbox_grams_delete AFTER DELETE ON inbox_entries BEGIN
  DELETE FROM inbox_grams WHERE rowid = old.message_seq;
END;
