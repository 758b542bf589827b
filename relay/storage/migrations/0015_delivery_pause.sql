-- Delivery paused per project (issue 25): admission goes on, the worker claims none of the
-- project's jobs until it is resumed. A row per paused project; none in the usual case.
CREATE TABLE paused_projects (
  project_id TEXT PRIMARY KEY,
  paused_at TEXT NOT NULL
);
