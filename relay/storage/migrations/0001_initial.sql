-- Tenancy: workspaces contain projects; domains, keys and emails belong to projects.
CREATE TABLE workspaces (
  id           TEXT PRIMARY KEY,
  name         TEXT NOT NULL,
  activated_at TEXT,
  created_at   TEXT NOT NULL
);

CREATE TABLE projects (
  id           TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  name         TEXT NOT NULL,
  environment  TEXT NOT NULL CHECK (environment IN ('development', 'production')),
  created_at   TEXT NOT NULL
);
CREATE INDEX projects_by_workspace ON projects(workspace_id);

-- One row per connection of a domain name to a project; each is verified on its own.
CREATE TABLE domains (
  id                 TEXT PRIMARY KEY,
  project_id         TEXT NOT NULL REFERENCES projects(id),
  name               TEXT NOT NULL,           -- lower-cased
  status             TEXT NOT NULL CHECK (status IN ('pending', 'verified')),
  dkim_selector      TEXT NOT NULL,
  dkim_public_key    TEXT,
  dkim_private_key   TEXT,                     -- encrypted with the relay's secret key
  records_json       TEXT NOT NULL DEFAULT '[]',
  created_at         TEXT NOT NULL,
  verified_at        TEXT,
  last_checked_at    TEXT,
  UNIQUE (project_id, name)
);
CREATE INDEX domains_by_name ON domains(name);

-- Secrets are never stored: only their SHA-256, looked up by hash and compared in constant time.
CREATE TABLE api_keys (
  id          TEXT PRIMARY KEY,
  project_id  TEXT NOT NULL REFERENCES projects(id),
  name        TEXT NOT NULL,
  prefix      TEXT NOT NULL CHECK (prefix IN ('rr_test_', 'rr_live_')),
  permission  TEXT NOT NULL CHECK (permission IN ('email:send', 'email:read')),
  secret_hash TEXT NOT NULL UNIQUE,
  last4       TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  revoked_at  TEXT
);
CREATE INDEX api_keys_by_project ON api_keys(project_id);

-- seq orders emails for cursor pagination (newest first); id is the public id.
CREATE TABLE emails (
  seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
  id                  TEXT NOT NULL UNIQUE,
  project_id          TEXT NOT NULL REFERENCES projects(id),
  workspace_id        TEXT NOT NULL REFERENCES workspaces(id),
  key_id              TEXT NOT NULL REFERENCES api_keys(id),
  status              TEXT NOT NULL,
  from_address        TEXT NOT NULL,
  to_json             TEXT NOT NULL,
  cc_json             TEXT NOT NULL,
  bcc_json            TEXT NOT NULL,
  reply_to            TEXT,
  subject             TEXT NOT NULL,
  text_body           TEXT,
  html_body           TEXT,
  headers_json        TEXT NOT NULL DEFAULT '{}',
  tags_json           TEXT NOT NULL DEFAULT '{}',
  metadata_json       TEXT NOT NULL DEFAULT '{}',
  test_mode           INTEGER NOT NULL,
  provider_message_id TEXT,
  suppression_reason  TEXT,
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL,
  terminal_at         TEXT,
  body_erased_at      TEXT
);
CREATE INDEX emails_by_project ON emails(project_id, seq);
CREATE INDEX emails_by_project_status ON emails(project_id, status, seq);
CREATE INDEX emails_by_key ON emails(key_id, seq);
CREATE INDEX emails_terminal ON emails(terminal_at) WHERE body_erased_at IS NULL AND terminal_at IS NOT NULL;

CREATE TABLE recipients (
  email_id   TEXT NOT NULL REFERENCES emails(id),
  position   INTEGER NOT NULL,
  address    TEXT NOT NULL,                    -- the bare address, as given
  address_lc TEXT NOT NULL,                    -- lower-cased, for lookups
  type       TEXT NOT NULL CHECK (type IN ('to', 'cc', 'bcc')),
  status     TEXT NOT NULL,
  attempts   INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (email_id, position)
);
CREATE INDEX recipients_to_lookup ON recipients(address_lc, type, email_id);

-- The timeline. recipient is kept for webhooks only; the read API never shows it for BCC.
CREATE TABLE events (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  id           TEXT NOT NULL UNIQUE,
  email_id     TEXT NOT NULL REFERENCES emails(id),
  project_id   TEXT NOT NULL,
  type         TEXT NOT NULL,
  recipient    TEXT,
  recipient_type TEXT,
  payload_json TEXT NOT NULL DEFAULT '{}',
  occurred_at  TEXT NOT NULL
);
CREATE INDEX events_by_email ON events(email_id, seq);

-- The durable queue: one job per email dispatch. state: ready -> running -> done | dead.
CREATE TABLE jobs (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  email_id    TEXT NOT NULL REFERENCES emails(id),
  state       TEXT NOT NULL CHECK (state IN ('ready', 'running', 'done', 'dead')),
  run_at      TEXT NOT NULL,
  attempts    INTEGER NOT NULL DEFAULT 0,
  locked_at   TEXT,
  last_error  TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX jobs_due ON jobs(state, run_at);
CREATE INDEX jobs_by_email ON jobs(email_id);

-- Admission results remembered per project and key, replayed for identical bodies.
CREATE TABLE idempotency_keys (
  project_id    TEXT NOT NULL,
  key           TEXT NOT NULL,
  body_hash     TEXT NOT NULL,
  email_id      TEXT NOT NULL,
  status_code   INTEGER NOT NULL,
  response_json TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  expires_at    TEXT NOT NULL,
  PRIMARY KEY (project_id, key)
);
CREATE INDEX idempotency_expiry ON idempotency_keys(expires_at);

CREATE TABLE suppressions (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  address_lc   TEXT NOT NULL,
  reason       TEXT NOT NULL CHECK (reason IN ('hard_bounce', 'complaint', 'manual')),
  created_at   TEXT NOT NULL,
  PRIMARY KEY (workspace_id, address_lc)
);

-- Accepted recipients per UTC month, for quotas; scope is 'ws:<id>' or 'key:<id>'.
CREATE TABLE usage_counters (
  scope  TEXT NOT NULL,
  month  TEXT NOT NULL,
  used   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (scope, month)
);

-- Mail captured by the SMTP sink.
CREATE TABLE captured_messages (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  id           TEXT NOT NULL UNIQUE,
  envelope_from TEXT NOT NULL,
  envelope_to_json TEXT NOT NULL,
  subject      TEXT,
  size         INTEGER NOT NULL,
  raw          BLOB NOT NULL,
  email_id     TEXT,
  received_at  TEXT NOT NULL
);

CREATE TABLE captured_recipients (
  message_id TEXT NOT NULL REFERENCES captured_messages(id) ON DELETE CASCADE,
  address_lc TEXT NOT NULL
);
CREATE INDEX captured_recipients_lookup ON captured_recipients(address_lc);

CREATE TABLE webhooks (
  id            TEXT PRIMARY KEY,
  project_id    TEXT NOT NULL REFERENCES projects(id),
  url           TEXT NOT NULL,
  events_json   TEXT NOT NULL,
  secret_enc    TEXT NOT NULL,                -- encrypted with the relay's secret key
  created_at    TEXT NOT NULL,
  deleted_at    TEXT
);
CREATE INDEX webhooks_by_project ON webhooks(project_id);

-- The webhook outbox: one row per (event, endpoint), written in the transaction of the event.
CREATE TABLE webhook_deliveries (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  webhook_id      TEXT NOT NULL REFERENCES webhooks(id),
  event_id        TEXT NOT NULL,
  event_type      TEXT NOT NULL,
  body            TEXT NOT NULL,               -- exact bytes sent on every attempt
  state           TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  created_at      TEXT NOT NULL,
  UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(state, next_attempt_at);

CREATE TABLE webhook_attempts (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id  INTEGER NOT NULL REFERENCES webhook_deliveries(id),
  attempt      INTEGER NOT NULL,
  status_code  INTEGER,
  error        TEXT,
  attempted_at TEXT NOT NULL
);
CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts(delivery_id);

-- Small key/value settings (test clock offset, relay secrets metadata).
CREATE TABLE settings (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
