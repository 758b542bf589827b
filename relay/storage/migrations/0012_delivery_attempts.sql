-- Every delivery attempt per recipient (CONTRACT section 11): where it went, over TLS or not, the
-- SMTP conversation (JSON, without AUTH arguments or message content), the final reply, the status
-- it led to and the next retry. Admin only; erased with the email's body (queue/maintenance.ts).
CREATE TABLE delivery_attempts (
  email_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  recipient TEXT NOT NULL,
  started_at TEXT NOT NULL,
  provider TEXT NOT NULL,
  host TEXT,
  port INTEGER,
  tls INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  reply TEXT,
  transcript_json TEXT NOT NULL,
  next_attempt_at TEXT,
  PRIMARY KEY (email_id, position, attempt)
);
