-- Port of SQLite's 0024: negated search terms of one or two characters through the index of short
-- terms (issue 23). A GIN index over a TEXT[] finds the entries that hold a gram, never those that
-- lack one, so `-e` checked every entry. short_grams becomes a tsvector (its grams as lexemes, the
-- same set) whose GIN index answers a tsquery `' ' & !'e'` by merging the two posting lists
-- without reading an entry: every entry holds the gram ' ' (storage/inbox.ts says why). A
-- tsvector column rather than an index over array_to_tsvector(short_grams): that expression costs
-- about 25 microseconds an entry wherever the planner checks it row by row.
DROP INDEX inbox_short_grams;
ALTER TABLE inbox_entries ALTER COLUMN short_grams DROP DEFAULT;
-- An entry past 500,000 bytes of grams (a tsvector holds at most 1 MB) holds ' ' and 'grams
-- overflow' instead, which every query of the index also matches (storage/inbox.ts: GRAMS_OVERFLOW).
ALTER TABLE inbox_entries ALTER COLUMN short_grams TYPE TSVECTOR USING array_to_tsvector(
  CASE WHEN octet_length(array_to_string(short_grams, '')) > 500000 THEN ARRAY[' ', 'grams overflow'] ELSE short_grams END
);
ALTER TABLE inbox_entries ALTER COLUMN short_grams SET DEFAULT '';
CREATE INDEX inbox_short_grams ON inbox_entries USING gin (short_grams);
