-- Rate windows keep a running count of their hits (PostgreSQL, issue 24). SQLite keeps its windows
-- in the relay's memory (one relay owns the file), so there is nothing to do here;
-- postgres/migrations/ holds the port.
SELECT 1;
