-- Delivery: state the SMTP sink keeps about what it received, so simulated outcomes survive a restart.

-- RCPT attempts the sink has seen per (delivery key, recipient), for the `delayed` simulation: the
-- first attempt is deferred with 451, later ones are accepted. The key is the email id taken from
-- the VERP envelope sender, or `sender:<envelope sender>` for mail from other SMTP clients.
CREATE TABLE sink_attempts (
  delivery_key TEXT NOT NULL,
  address_lc   TEXT NOT NULL,
  attempts     INTEGER NOT NULL DEFAULT 0,
  updated_at   TEXT NOT NULL,
  PRIMARY KEY (delivery_key, address_lc)
);

-- Complaints the sink's feedback loop reported before the worker had recorded the delivery they
-- complain about; recording that delivery applies them (domain/outcomes.ts).
CREATE TABLE pending_complaints (
  email_id    TEXT NOT NULL,
  address_lc  TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  PRIMARY KEY (email_id, address_lc)
);

CREATE INDEX captured_recipients_by_message ON captured_recipients(message_id);
CREATE INDEX captured_messages_by_email ON captured_messages(email_id);
