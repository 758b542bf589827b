-- Port of SQLite's 0028 (narrow rows of the three lower-cased fields a term can name): the same
-- view and table; a statement trigger writes the rows of each multi-row INSERT of entries in one
-- statement, and a row trigger deletes a deleted entry's row. Not 0026's foreign key: its check
-- of each inserted row (a key-share lock on the entry) cost about 20 µs per entry, the trigger's
-- insert without it 2 (EXPLAIN ANALYZE, 20,000 rows inserted, interleaved rounds).
CREATE VIEW inbox_search_fields_source AS
SELECT message_seq, from_lc, to_lc, subject_lc FROM inbox_entries;

CREATE TABLE inbox_search_fields (
  message_seq BIGINT PRIMARY KEY,
  from_lc     TEXT NOT NULL,
  to_lc       TEXT NOT NULL,
  subject_lc  TEXT NOT NULL
);
INSERT INTO inbox_search_fields (message_seq, from_lc, to_lc, subject_lc) SELECT message_seq, from_lc, to_lc, subject_lc FROM inbox_search_fields_source;

CREATE FUNCTION inbox_search_fields_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO inbox_search_fields (message_seq, from_lc, to_lc, subject_lc) SELECT message_seq, from_lc, to_lc, subject_lc FROM new_entries;
  RETURN NULL;
END $$;
CREATE TRIGGER inbox_search_fields_insert AFTER INSERT ON inbox_entries
  REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION inbox_search_fields_insert();
CREATE FUNCTION inbox_search_fields_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM inbox_search_fields WHERE message_seq = OLD.message_seq;
  RETURN NULL;
END $$;
CREATE TRIGGER inbox_search_fields_delete AFTER DELETE ON inbox_entries FOR EACH ROW EXECUTE FUNCTION inbox_search_fields_delete();
ANALYZE inbox_search_fields;
