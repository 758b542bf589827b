-- When each API key last authenticated a request, for the dashboard's key list. Written at most
-- once a minute per key by each relay (relay/domain/key-use.ts), inside the group commit already
-- under way, so a busy key costs no fsync of its own. NULL: never used since this migration.
ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;
