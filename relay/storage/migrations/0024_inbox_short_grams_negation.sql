-- Negated search terms of one or two characters through the index of short terms (issue 23): on
-- SQLite inbox_grams (0020) answers them as it is (an FTS5 query `" " NOT "e"`: every entry holds
-- the gram " ", storage/inbox.ts says why), so there is nothing to do here; postgres/migrations/
-- holds the port.
SELECT 1;
