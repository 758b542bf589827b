// The repositories write `?` placeholders (SQLite's); PostgreSQL numbers them ($1, $2, ...).
// Question marks inside string literals, quoted identifiers and comments are left alone.
//
// Many rows or keys travel as one JSON array parameter read with SQLite's `json_each(?)` (one
// statement whatever their number). PostgreSQL reads the same statement with json_array_elements:
// `value` is then the element as text for `SELECT value`, and as json (so `value->>'id'` picks a
// field, as in SQLite) everywhere else.

const cache = new Map<string, string>();
const MAX_CACHED = 2_000;

const SCALAR_ELEMENTS = /SELECT value FROM json_each\(\?\)/g;
const ELEMENTS = /json_each\(\?\)/g;

export function toPostgresPlaceholders(sql: string): string {
  const cached = cache.get(sql);
  if (cached !== undefined) return cached;
  const out = numberPlaceholders(
    sql
      .replace(SCALAR_ELEMENTS, 'SELECT value FROM json_array_elements_text(CAST(? AS json)) AS json_each(value)')
      .replace(ELEMENTS, 'json_array_elements(CAST(? AS json)) AS json_each(value)'),
  );
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(sql, out);
  return out;
}

function numberPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = closing(sql, i, c);
      out += sql.slice(i, end);
      i = end - 1;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const stop = end < 0 ? sql.length : end;
      out += sql.slice(i, stop);
      i = stop - 1;
    } else if (c === '?') {
      out += `$${++n}`;
    } else {
      out += c;
    }
  }
  return out;
}

/** Index just past the quote that closes the one at start ('' and "" are escaped quotes). */
function closing(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length;
}
