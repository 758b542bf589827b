-- The sink's intake in one statement (relay/storage/captured.ts; SQLite's 0029 says why): an
-- INSERT into this view stores each message and its recipients (recipients_lc_json: the distinct
-- envelope recipients, lowercased by the relay, as a JSON array), and a message without a project
-- takes its email's. PostgreSQL's port: the trigger's body is a function.
CREATE VIEW captured_intake AS
  SELECT id, envelope_from, header_from, envelope_to_json, subject, size, raw, email_id, received_at, project_id,
         '[]'::text AS recipients_lc_json
  FROM captured_messages;

CREATE FUNCTION captured_intake_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO captured_messages (id, envelope_from, header_from, envelope_to_json, subject, size, raw, email_id, received_at, project_id)
  VALUES (NEW.id, NEW.envelope_from, NEW.header_from, NEW.envelope_to_json, NEW.subject, NEW.size, NEW.raw, NEW.email_id, NEW.received_at,
          COALESCE(NEW.project_id, (SELECT e.project_id FROM emails e WHERE e.id = NEW.email_id)));
  INSERT INTO captured_recipients (message_id, address_lc) SELECT NEW.id, value FROM json_array_elements_text(NEW.recipients_lc_json::json);
  RETURN NEW;
END $$;
CREATE TRIGGER captured_intake_insert INSTEAD OF INSERT ON captured_intake
  FOR EACH ROW EXECUTE FUNCTION captured_intake_insert();
