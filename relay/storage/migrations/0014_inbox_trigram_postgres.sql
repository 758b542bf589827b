-- Trigram indexes for the inbox search on PostgreSQL (issue 23): SQLite has had its FTS5 trigram
-- index since 0007, so there is nothing to do here; postgres/migrations/ holds the port.
SELECT 1;
