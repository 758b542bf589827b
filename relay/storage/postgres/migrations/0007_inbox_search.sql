-- Port of SQLite's 0007 (a trigram FTS5 index for the inbox search). FTS5 is SQLite's own; on
-- PostgreSQL the inbox search scans inbox_entries with strpos (storage/inbox.ts), so there is
-- nothing to create; the port exists so SQLite's FTS5 statements are not applied here.
SELECT 1;
