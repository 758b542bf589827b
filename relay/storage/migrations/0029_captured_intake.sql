-- The sink's intake in one statement (relay/storage/captured.ts): an INSERT into this view stores
-- each message and its recipients (recipients_lc_json: the distinct envelope recipients, lowercased
-- by the relay, as a JSON array), and a message without a project takes its email's. On SQLite a
-- group of captures then commits in one trip to the sqlite3 thread pool instead of four (BEGIN,
-- the messages, the recipients, COMMIT), each a wake-up a client waits for before its 250.
CREATE VIEW captured_intake AS
  SELECT id, envelope_from, header_from, envelope_to_json, subject, size, raw, email_id, received_at, project_id,
         '[]' AS recipients_lc_json
  FROM captured_messages;

CREATE TRIGGER captured_intake_insert INSTEAD OF INSERT ON captured_intake
BEGIN
  INSERT INTO captured_messages (id, envelope_from, header_from, envelope_to_json, subject, size, raw, email_id, received_at, project_id)
  VALUES (NEW.id, NEW.envelope_from, NEW.header_from, NEW.envelope_to_json, NEW.subject, NEW.size, NEW.raw, NEW.email_id, NEW.received_at,
          COALESCE(NEW.project_id, (SELECT project_id FROM emails WHERE id = NEW.email_id)));
  INSERT INTO captured_recipients (message_id, address_lc) SELECT NEW.id, value FROM json_each(NEW.recipients_lc_json);
END;
