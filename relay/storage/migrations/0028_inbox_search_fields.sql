-- Negated field terms of three characters or more through narrow rows too (issue 23):
-- `-subject:receipt`, which (almost) every entry's subject holds, read every entry's wide row to
-- prove the answer empty. A check of the field's place in 0026's joined text cost as much (a
-- field may hold char(1)), and the three fields as columns beside the joined text saved nothing
-- on SQLite (measured at 20,000 entries: 3.7 ms against 4.0 for the entries' own rows; the joined
-- text is most of the bytes walked). inbox_search_fields holds one row per entry of only the three
-- lower-cased fields a term can name (a quarter of 0026's bytes: 1.6 ms), and storage/inbox.ts
-- checks the one column. As in 0026 the view is the definition: the trigger writes each new
-- entry's row from it, a test checks the table against it, and it fills the table once here.
CREATE VIEW inbox_search_fields_source AS
SELECT message_seq, from_lc, to_lc, subject_lc FROM inbox_entries;

CREATE TABLE inbox_search_fields (
  message_seq INTEGER PRIMARY KEY,
  from_lc     TEXT NOT NULL,
  to_lc       TEXT NOT NULL,
  subject_lc  TEXT NOT NULL
);
INSERT INTO inbox_search_fields (message_seq, from_lc, to_lc, subject_lc) SELECT message_seq, from_lc, to_lc, subject_lc FROM inbox_search_fields_source;

CREATE TRIGGER inbox_search_fields_insert AFTER INSERT ON inbox_entries BEGIN
  INSERT INTO inbox_search_fields (message_seq, from_lc, to_lc, subject_lc)
  SELECT message_seq, from_lc, to_lc, subject_lc FROM inbox_search_fields_source WHERE message_seq = new.message_seq;
END;
CREATE TRIGGER inbox_search_fields_delete AFTER DELETE ON inbox_entries BEGIN
  DELETE FROM inbox_search_fields WHERE message_seq = old.message_seq;
END;
