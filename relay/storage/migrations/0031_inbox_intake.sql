-- The indexer's entries in one statement on SQLite (relay/storage/inbox.ts: insertInboxEntries):
-- an INSERT into this view stores each entry, its short grams (inbox_grams, 0020: `grams`, the
-- tokens computed in JS) and its tag terms (inbox_tags, 0016: `tag_terms_json`, a JSON array),
-- and RETURNING names the entries kept. An entry whose message is gone (deleted after it was read)
-- or that exists already is skipped whole: RAISE(IGNORE) ends its row's trigger before any write,
-- and the statement's RETURNING leaves that row out. The writer made three trips a chunk of
-- entries before (the entries with RETURNING, then their grams and their tags), each a wake-up of
-- the sqlite3 thread pool and of the event loop while the writer's other units waited (issue 24,
-- session 16). PostgreSQL keeps its statements (its grams are a column of the entry):
-- postgres/migrations/ holds a no-op.
CREATE VIEW inbox_intake AS
  SELECT message_seq, id, from_name, from_address, to_text, subject, snippet, size, attachments, email_id, project_id, received_at,
         from_lc, to_lc, subject_lc, snippet_lc, header_message_id, '' AS grams, '[]' AS tag_terms_json
  FROM inbox_entries;

CREATE TRIGGER inbox_intake_insert INSTEAD OF INSERT ON inbox_intake
BEGIN
  SELECT RAISE(IGNORE)
   WHERE NOT EXISTS (SELECT 1 FROM captured_messages m WHERE m.seq = NEW.message_seq)
      OR EXISTS (SELECT 1 FROM inbox_entries e WHERE e.message_seq = NEW.message_seq)
      OR EXISTS (SELECT 1 FROM inbox_entries e WHERE e.id = NEW.id);
  INSERT INTO inbox_entries (message_seq, id, from_name, from_address, to_text, subject, snippet, size, attachments, email_id, project_id,
                             received_at, from_lc, to_lc, subject_lc, snippet_lc, header_message_id)
  VALUES (NEW.message_seq, NEW.id, NEW.from_name, NEW.from_address, NEW.to_text, NEW.subject, NEW.snippet, NEW.size, NEW.attachments,
          NEW.email_id, NEW.project_id, NEW.received_at, NEW.from_lc, NEW.to_lc, NEW.subject_lc, NEW.snippet_lc, NEW.header_message_id);
  INSERT INTO inbox_grams (rowid, grams) VALUES (NEW.message_seq, NEW.grams);
  INSERT INTO inbox_tags (term, message_seq) SELECT DISTINCT value, NEW.message_seq FROM json_each(NEW.tag_terms_json) WHERE true
    ON CONFLICT DO NOTHING;
END;
