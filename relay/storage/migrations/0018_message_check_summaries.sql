-- The checks' summary badge of captured mail (issue 26): pass, warnings or fail with the reasons,
-- computed lazily (when a list shows a message without one, or when its checks are asked for)
-- and cached here; the sink never computes it, so capture costs what it did. A badge of older
-- rules (rules_version below relay/inbox/checks/verdict.ts's VERDICT_RULES) is computed again.
-- Deleted with its message (storage/inbox.ts, storage/captured.ts). One file for both backends.
CREATE TABLE message_check_summaries (
  message_id    TEXT PRIMARY KEY,
  verdict       TEXT NOT NULL,               -- pass | warnings | fail
  reasons_json  TEXT NOT NULL,               -- JSON array of strings, worst first
  rules_version INTEGER NOT NULL,
  checked_at    TEXT NOT NULL
);
