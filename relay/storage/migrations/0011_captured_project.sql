-- Per-project inboxes (CONTRACT section 10): a captured message belongs to a project when the
-- relay can tell (the worker's delivery of one of its emails, or a sink client that authenticated
-- with an API key), else NULL. inbox_entries carries a copy so the inbox filters without a join.
-- Mail captured before this migration gets its email's project when it has one.
ALTER TABLE captured_messages ADD COLUMN project_id TEXT;
ALTER TABLE inbox_entries ADD COLUMN project_id TEXT;
UPDATE captured_messages SET project_id = (SELECT e.project_id FROM emails e WHERE e.id = captured_messages.email_id)
 WHERE email_id IS NOT NULL;
UPDATE inbox_entries SET project_id = (SELECT m.project_id FROM captured_messages m WHERE m.seq = inbox_entries.message_seq);
-- ?project= on the list and the inbox, and the wait's "newest match", newest first.
CREATE INDEX captured_by_project ON captured_messages(project_id, seq);
CREATE INDEX inbox_by_project ON inbox_entries(project_id, message_seq);
