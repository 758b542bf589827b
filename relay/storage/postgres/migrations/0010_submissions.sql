-- Messages submitted over SMTP (CONTRACT section 9), kept as the application built them: the
-- worker delivers these bytes (DKIM-signed, a Message-ID added when missing) instead of composing
-- a message from the email's fields. `raw` is erased with the other bodies (body retention); the
-- row stays, so the email log can still say the email came over SMTP.
CREATE TABLE submissions (
  email_id  TEXT PRIMARY KEY REFERENCES emails(id),
  size      INTEGER NOT NULL,
  raw       BYTEA
);
