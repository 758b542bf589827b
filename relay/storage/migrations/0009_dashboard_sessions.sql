-- Dashboard sessions and the one-time sign-in links printed at start, in the database, so every
-- relay sharing it honours them (a proxy may send a dashboard's requests to any relay) and a
-- restart keeps people signed in. Only SHA-256 digests of the session ids and link nonces are
-- stored; admin_token_hash ties a session to the admin token it was opened with, so changing the
-- token signs everyone out. Times are real milliseconds since the epoch (not the test clock), BIGINT
-- so the one file serves both backends (SQLite gives it integer affinity).
CREATE TABLE dashboard_sessions (
  id_hash TEXT PRIMARY KEY,
  admin_token_hash TEXT NOT NULL,
  expires_at_ms BIGINT NOT NULL
);
CREATE TABLE dashboard_signin_links (
  nonce_hash TEXT PRIMARY KEY,
  expires_at_ms BIGINT NOT NULL
);
