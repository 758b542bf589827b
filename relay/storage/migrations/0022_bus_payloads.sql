-- Bus messages too large for one NOTIFY travel as a row that the notification names (issue 24):
-- only relays sharing a PostgreSQL database exchange them, so there is nothing to do on SQLite;
-- postgres/migrations/ holds the port.
SELECT 1;
