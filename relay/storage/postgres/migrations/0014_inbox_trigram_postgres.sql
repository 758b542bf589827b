-- The inbox search through indexes on PostgreSQL as on SQLite (0007's FTS5 trigram index): pg_trgm
-- GIN indexes over the lower-cased search fields, which serve storage/inbox.ts's `LIKE '%term%'`
-- for terms of three characters or more. pg_trgm ships with PostgreSQL and is a trusted extension
-- (the database's owner may create it); where it cannot be created the search still works, by
-- scanning, as before this migration.
DO $$
BEGIN
  CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN insufficient_privilege OR undefined_file OR feature_not_supported THEN
  RAISE NOTICE 'pg_trgm is not available: the inbox search scans';
END $$;

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    CREATE INDEX inbox_from_trgm ON inbox_entries USING gin (from_lc gin_trgm_ops);
    CREATE INDEX inbox_to_trgm ON inbox_entries USING gin (to_lc gin_trgm_ops);
    CREATE INDEX inbox_subject_trgm ON inbox_entries USING gin (subject_lc gin_trgm_ops);
    CREATE INDEX inbox_snippet_trgm ON inbox_entries USING gin (snippet_lc gin_trgm_ops);
  END IF;
END $$;
