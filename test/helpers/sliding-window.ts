// How full a sliding window got: the rate-limit tests and the PostgreSQL bench count what was
// admitted from the stored emails' times.

/** The most times any window of `ms` ((t - ms, t]) holds. */
export function fullestWindow(times: readonly number[], ms: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[start]! <= sorted[end]! - ms) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
