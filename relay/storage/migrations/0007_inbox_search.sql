-- Inbox search at 100,000 messages and more: a trigram full-text index over the lower-cased search
-- fields of inbox_entries (an external-content FTS5 table: the text is stored once, in
-- inbox_entries). A rare term then costs an index lookup instead of a scan of every entry; terms
-- of one or two characters, which trigrams cannot index, still scan (storage/inbox.ts).
CREATE VIRTUAL TABLE inbox_search USING fts5(
  from_lc, to_lc, subject_lc, snippet_lc,
  content = 'inbox_entries', content_rowid = 'message_seq', tokenize = 'trigram'
);
INSERT INTO inbox_search (inbox_search) VALUES ('rebuild');

CREATE TRIGGER inbox_search_insert AFTER INSERT ON inbox_entries BEGIN
  INSERT INTO inbox_search (rowid, from_lc, to_lc, subject_lc, snippet_lc)
  VALUES (new.message_seq, new.from_lc, new.to_lc, new.subject_lc, new.snippet_lc);
END;
CREATE TRIGGER inbox_search_delete AFTER DELETE ON inbox_entries BEGIN
  INSERT INTO inbox_search (inbox_search, rowid, from_lc, to_lc, subject_lc, snippet_lc)
  VALUES ('delete', old.message_seq, old.from_lc, old.to_lc, old.subject_lc, old.snippet_lc);
END;
