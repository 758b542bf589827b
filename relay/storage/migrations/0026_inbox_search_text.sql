-- Negated free-text terms of three characters or more through narrow rows (issue 23). No index
-- lists what an entry lacks: `-order`, which every entry holds, must look at every entry to prove
-- the answer empty, and that check read the wide inbox_entries rows (names, addresses, subject and
-- snippet twice, flags), 42 ms of CPU at 100,000 entries. inbox_search_text holds one narrow row
-- per entry: its four lower-cased search fields (0005) joined by char(1), so storage/inbox.ts
-- checks the term once per entry over a third of the bytes, and looks up the entry only for the
-- rows that lack it. A term holding char(1) could match across two fields: storage/inbox.ts checks
-- such a term on the fields themselves. The view is the definition: the trigger writes each new
-- entry's row from it, a test checks the table against it, and it fills the table once here.
CREATE VIEW inbox_search_text_source AS
SELECT message_seq, from_lc || char(1) || to_lc || char(1) || subject_lc || char(1) || snippet_lc AS text
FROM inbox_entries;

CREATE TABLE inbox_search_text (
  message_seq INTEGER PRIMARY KEY,
  text        TEXT NOT NULL
);
INSERT INTO inbox_search_text (message_seq, text) SELECT message_seq, text FROM inbox_search_text_source;

CREATE TRIGGER inbox_search_text_insert AFTER INSERT ON inbox_entries BEGIN
  INSERT INTO inbox_search_text (message_seq, text) SELECT message_seq, text FROM inbox_search_text_source WHERE message_seq = new.message_seq;
END;
CREATE TRIGGER inbox_search_text_delete AFTER DELETE ON inbox_entries BEGIN
  DELETE FROM inbox_search_text WHERE message_seq = old.message_seq;
END;
