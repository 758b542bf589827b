-- Rate windows shared by relays on PostgreSQL (issue 24): one row per scope, charged in one
-- conditional statement. SQLite keeps its windows in the relay's memory (one relay owns the file),
-- so there is nothing to do here; postgres/migrations/ holds the port.
SELECT 1;
