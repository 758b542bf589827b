-- The inbox search's `tag:` and `message-id:` terms (issue 23), through indexes on both backends
-- (one file: SQLite and PostgreSQL accept the same SQL), and the unread count per project.
--
-- inbox_tags: one row per (tag term, message): a tag with a value gives two terms, `name` and
-- `name=value`, lower-cased (relay/inbox/search-terms.ts). Its primary key is the index of
-- `tag:`: a lookup of the term, walked newest first.
CREATE TABLE inbox_tags (
  term        TEXT NOT NULL,
  message_seq BIGINT NOT NULL,
  PRIMARY KEY (term, message_seq)
);
-- Deleting one message's tags with it.
CREATE INDEX inbox_tags_by_message ON inbox_tags(message_seq);

-- The Message-ID header without its angle brackets, lower-cased; '' when the message has none.
-- NULL means "not read yet": entries written before this migration, which the indexer backfills
-- at start (relay/inbox/indexer.ts) from the raw message and its email's tags.
ALTER TABLE inbox_entries ADD COLUMN header_message_id TEXT;
CREATE INDEX inbox_by_message_id ON inbox_entries(header_message_id, message_seq);
CREATE INDEX inbox_terms_pending ON inbox_entries(message_seq) WHERE header_message_id IS NULL;

-- before: and after: walk the entries by capture time from their bound (storage/inbox.ts): the
-- oldest mail is found without walking past everything newer.
CREATE INDEX inbox_by_received ON inbox_entries(received_at, message_seq);

-- The dashboard's project selector: unread messages per project, from the unread rows alone.
CREATE INDEX inbox_unread_by_project ON inbox_entries(project_id) WHERE read_at IS NULL;
