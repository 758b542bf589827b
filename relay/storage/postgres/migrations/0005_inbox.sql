-- The dashboard's inbox: one narrow row per captured message, written by relay/inbox/indexer.ts
-- after the capture commits. The list, search and unread count read only this table: the raw
-- message (a BLOB) lives in captured_messages, and a scan past it would walk its overflow pages.
-- message_seq equals captured_messages.seq, so the inbox pages in capture order.
CREATE TABLE inbox_entries (
  message_seq  BIGINT PRIMARY KEY,
  id           TEXT NOT NULL UNIQUE,
  from_name    TEXT NOT NULL,               -- the From header's display name ('' when none)
  from_address TEXT NOT NULL,               -- the From header's address, else the envelope sender
  to_text      TEXT NOT NULL,               -- the To header as decoded, else the envelope recipients
  subject      TEXT NOT NULL,
  snippet      TEXT NOT NULL,               -- the first characters of the text body
  size         INTEGER NOT NULL,
  attachments  INTEGER NOT NULL,
  email_id     TEXT,
  received_at  TEXT NOT NULL,
  read_at      TEXT,
  -- Lower-cased search fields (from:, to:, subject:, free text).
  from_lc      TEXT NOT NULL,
  to_lc        TEXT NOT NULL,
  subject_lc   TEXT NOT NULL,
  snippet_lc   TEXT NOT NULL
);
-- The unread count and is:unread, without touching read rows.
CREATE INDEX inbox_unread ON inbox_entries(message_seq) WHERE read_at IS NULL;
