-- SQLite's 0031 writes the indexer's entries, their short grams and their tag terms in one
-- statement through a view (a trip to the sqlite3 thread pool each statement). PostgreSQL's
-- entries carry their grams in the row (0020, 0024), and storage/inbox.ts keeps its two
-- statements there: nothing to do.
SELECT 1;
