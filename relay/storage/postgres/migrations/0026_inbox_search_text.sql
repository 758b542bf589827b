-- Port of SQLite's 0026 (narrow rows for negated free-text terms of three characters or more):
-- the same view and table; storage/inbox.ts checks `text NOT LIKE '%term%'` (LIKE: half the CPU of
-- strpos() here). A statement trigger writes the rows of each multi-row INSERT of entries in one
-- statement; a deleted entry takes its row with it (the foreign key cascades).
CREATE VIEW inbox_search_text_source AS
SELECT message_seq, from_lc || chr(1) || to_lc || chr(1) || subject_lc || chr(1) || snippet_lc AS text
FROM inbox_entries;

CREATE TABLE inbox_search_text (
  message_seq BIGINT PRIMARY KEY REFERENCES inbox_entries (message_seq) ON DELETE CASCADE,
  text        TEXT NOT NULL
);
INSERT INTO inbox_search_text (message_seq, text) SELECT message_seq, text FROM inbox_search_text_source;

-- The view's expression over the inserted rows (the view itself would be joined to the whole table).
CREATE FUNCTION inbox_search_text_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO inbox_search_text (message_seq, text)
  SELECT message_seq, from_lc || chr(1) || to_lc || chr(1) || subject_lc || chr(1) || snippet_lc FROM new_entries;
  RETURN NULL;
END $$;
CREATE TRIGGER inbox_search_text_insert AFTER INSERT ON inbox_entries
  REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION inbox_search_text_insert();
ANALYZE inbox_search_text;
