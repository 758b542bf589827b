-- A rate window per scope (`key:<id>`, `ws:<id>`, `test:<id>`) as one row, so an admission
-- checks and charges it in one conditional statement (storage/counters.ts), in a short
-- transaction of its own, instead of locking the scope from its first read to its COMMIT.
-- at_ms[i] is the latest hit of a 1/50th of the window, hits[i] how many hits it stands for.
-- Each charge drops the entries older than two windows before its time and raises
-- kept_after_ms to that point: a charge whose own window reaches back past it comes too late
-- to be checked (the row no longer holds all it would need) and is refused. `window_ms` and
-- `cap` are those of the last charge (the conditional update reads them from the row it proposes).
DROP TABLE rate_hits;

CREATE TABLE rate_windows (
  scope          TEXT PRIMARY KEY,
  window_ms      BIGINT NOT NULL,
  cap            BIGINT NOT NULL,
  kept_after_ms  BIGINT NOT NULL,
  at_ms          BIGINT[] NOT NULL,
  hits           INTEGER[] NOT NULL
);

-- What an admission batch charged to the usage counters in its short transaction of counters,
-- until its own transaction commits and deletes the row. A row left over a minute belongs to a
-- batch that never committed: maintenance gives its recipients back (storage/counters.ts).
CREATE TABLE counter_reservations (
  id          TEXT PRIMARY KEY,
  month       TEXT NOT NULL,
  usage_json  TEXT NOT NULL,
  created_at  TEXT NOT NULL
);
CREATE INDEX counter_reservations_by_age ON counter_reservations(created_at);
