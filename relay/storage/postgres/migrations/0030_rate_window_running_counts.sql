-- A rate window's entries carry the window's running count of hits through each of them
-- (`upto`, with `before_first` the count before the first kept entry) instead of each one's own
-- hits (issue 24): a window's count from any time on is then the last running count less the one
-- before that time's entry (found by binary search), not a sum over its entries. A batch through
-- twenty workspaces reads sixty windows and counts every one it does not read whole; summed, they
-- cost PostgreSQL about as much as charging them.
ALTER TABLE rate_windows ADD COLUMN before_first INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rate_windows ADD COLUMN upto INTEGER[];
UPDATE rate_windows SET upto = COALESCE(
  (SELECT array_agg(CAST(t.u % 2147483648 AS integer) ORDER BY t.o)
     FROM (SELECT x.o, SUM(x.h) OVER (ORDER BY x.o) AS u FROM unnest(hits) WITH ORDINALITY AS x(h, o)) AS t),
  '{}');
ALTER TABLE rate_windows ALTER COLUMN upto SET NOT NULL;
ALTER TABLE rate_windows DROP COLUMN hits;
