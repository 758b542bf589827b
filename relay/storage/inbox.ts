// The dashboard's inbox: inbox_entries (one narrow row per captured message), its search and
// paging, read flags, and deleting captured mail with its entry.
import type { InboxEntry } from 'raven-email-sdk';
import { deleteCheckSummaries } from './check-summaries.js';
import type { Db, Queryable, Reader } from './db.js';
import { inValues, insertRows } from './rows.js';

export type { InboxEntry };

/** What the `tag:` and `message-id:` terms compare with (relay/inbox/search-terms.ts). */
export interface EntrySearchTerms {
  /** The Message-ID as `message-id:` looks it up; '' when none. */
  message_id_term: string;
  /** `name` and `name=value` of every tag. */
  tag_terms: string[];
}

/** What the indexer computes from a raw message; `seq` is the captured message's. */
export type NewInboxEntry = Omit<InboxEntry, 'read'> & EntrySearchTerms & { seq: number };

type Comparison = '<' | '<=' | '>' | '>=';

/** One search: every term must match (AND); each text list holds lower-cased substrings. */
export interface InboxSearch {
  from: string[];
  to: string[];
  subject: string[];
  text: string[];
  /** tag: terms, exact (`name` or `name=value`, as EntrySearchTerms holds them). */
  tags: string[];
  /** message-id: terms, exact. */
  messageIds: string[];
  /** Negated terms: none of these substrings (tags, message ids: values) may appear. */
  exclude: { from: string[]; to: string[]; subject: string[]; text: string[]; tags: string[]; messageIds: string[] };
  /** project: terms. */
  projects: { include: string[]; exclude: string[] };
  /** Whether the message has attachments (has:attachment). */
  attachments?: boolean;
  /** before: and after: as comparisons of the capture time (ISO 8601). */
  received: Array<{ op: Comparison; at: string }>;
  /** larger: and smaller: as comparisons of the raw size in bytes. */
  size: Array<{ op: Comparison; bytes: number }>;
  unread?: boolean;
  /** Only this project's messages. */
  project?: string;
}

/** An inbox_entries row: the API's InboxEntry with `to` and `read` as the table stores them. */
type EntryRow = Omit<InboxEntry, 'to' | 'read'> & { message_seq: number; to_text: string; read_at: string | null };

const ENTRY_COLUMNS = 'message_seq, id, from_name, from_address, to_text, subject, snippet, size, attachments, email_id, project_id, received_at, read_at';
/** ENTRY_COLUMNS of inbox_entries named `e` in a join. */
const E_ENTRY_COLUMNS = ENTRY_COLUMNS.split(', ').map((c) => `e.${c}`).join(', ');

function entryView(row: EntryRow): InboxEntry {
  return {
    id: row.id,
    from_name: row.from_name,
    from_address: row.from_address,
    to: row.to_text,
    subject: row.subject,
    snippet: row.snippet,
    size: row.size,
    attachments: row.attachments,
    email_id: row.email_id,
    project_id: row.project_id,
    received_at: row.received_at,
    read: row.read_at !== null,
  };
}

/** The start of a raw message, where its header section is (a header block past 64 KiB is cut). */
const HEAD_BYTES = 65_536;

/**
 * Entries written before migration 0016, whose search terms are not read yet (the indexer's
 * backfill): the start of each raw message and the tags of the email the worker delivered.
 */
export async function entriesWithoutSearchTerms(
  db: Pick<Db, 'all'>,
  limit: number,
): Promise<Array<{ seq: number; head: Buffer; tags_json: string | null }>> {
  return db.all(
    `SELECT e.message_seq AS seq, substr(m.raw, 1, ${HEAD_BYTES}) AS head, em.tags_json
       FROM inbox_entries e JOIN captured_messages m ON m.seq = e.message_seq LEFT JOIN emails em ON em.id = m.email_id
      WHERE e.header_message_id IS NULL ORDER BY e.message_seq LIMIT ?`,
    [limit],
  );
}

async function insertTagTerms(tx: Queryable, seq: number, terms: readonly string[]): Promise<void> {
  await insertRows(tx, 'inbox_tags', ['term', 'message_seq'], terms.map((term) => ({ term, message_seq: seq })), 'ON CONFLICT DO NOTHING');
}

/** Stores an entry's search terms (its tags, its Message-ID); a second writer's are the same. */
export async function saveSearchTerms(tx: Queryable, seq: number, terms: EntrySearchTerms): Promise<void> {
  await insertTagTerms(tx, seq, terms.tag_terms);
  await tx.run('UPDATE inbox_entries SET header_message_id = ? WHERE message_seq = ?', [terms.message_id_term, seq]);
}

/** Captured messages that have no inbox entry yet (captured while the indexer was behind or down). */
export async function unindexedMessages(db: Pick<Db, 'all'>, limit: number): Promise<Array<{ seq: number; id: string }>> {
  return db.all<{ seq: number; id: string }>(
    `SELECT m.seq, m.id FROM captured_messages m LEFT JOIN inbox_entries e ON e.message_seq = m.seq
      WHERE e.message_seq IS NULL ORDER BY m.seq LIMIT ?`,
    [limit],
  );
}

/** A captured message as the indexer reads it (without its raw bytes), with the tags of the email the worker delivered (else null). */
export interface CapturedForIndexing {
  seq: number;
  id: string;
  size: number;
  envelope_from: string;
  envelope_to_json: string;
  email_id: string | null;
  project_id: string | null;
  received_at: string;
  tags_json: string | null;
}

/** The messages of `ids` as the indexer reads them (one statement), in capture order; deleted ones are left out. */
export async function capturedForIndexing(db: Reader, ids: readonly string[]): Promise<CapturedForIndexing[]> {
  if (ids.length === 0) return [];
  const within = inValues(db, 'm.id', ids);
  const rows = await db.all<CapturedForIndexing>(
    `SELECT m.seq, m.id, m.size, m.envelope_from, m.envelope_to_json, m.email_id, m.project_id, m.received_at, em.tags_json
       FROM captured_messages m LEFT JOIN emails em ON em.id = m.email_id WHERE ${within.sql} ORDER BY m.seq`,
    within.params,
  );
  return rows.map((row) => ({ ...row, seq: Number(row.seq), size: Number(row.size) }));
}

/** The lower-cased search fields of an entry, in SEARCH_FIELDS' order. */
export function searchFieldsOf(e: Pick<InboxEntry, 'from_name' | 'from_address' | 'to' | 'subject' | 'snippet'>): string[] {
  return [`${e.from_name} ${e.from_address}`.toLowerCase(), e.to.toLowerCase(), e.subject.toLowerCase(), e.snippet.toLowerCase()];
}

/**
 * The columns of searchFieldsOf, each with the tag its field's own grams carry (0025), for the
 * fields a term can name (from:, to:, subject:); the snippet is free text's only. from_lc joins
 * the name and the address with a space (always has: 0005 on), so every entry holds the gram
 * EVERY_ENTRY_GRAM, which a negated short term's index query starts from.
 */
const SEARCH_FIELDS = [
  { column: 'from_lc', tag: 'f:' },
  { column: 'to_lc', tag: 't:' },
  { column: 'subject_lc', tag: 's:' },
  { column: 'snippet_lc', tag: undefined },
] as const;

/** A gram every entry holds (searchFieldsOf's from_lc): "all entries" to the index of short terms. */
export const EVERY_ENTRY_GRAM = ' ';

/** Every distinct substring of one or two characters (code points) of each field (never across two): the free-text grams (0020). */
export function freeTextGramsOf(fields: readonly string[]): Set<string> {
  const grams = new Set<string>();
  for (const field of fields) {
    const chars = [...field];
    for (let i = 0; i < chars.length; i++) {
      grams.add(chars[i]!);
      if (i + 1 < chars.length) grams.add(chars[i]! + chars[i + 1]!);
    }
  }
  return grams;
}

/**
 * A short term of one field as the index of short terms holds it (0025): the field's tag, then
 * the term. One or two code points: a field gram has three or four, never a free-text gram's count.
 */
const fieldGram = (tag: string, term: string) => `${tag}${term}`;

/**
 * What the index of short terms holds for an entry: every distinct substring of one or two
 * characters (code points) of each field (0020), then those of from_lc, to_lc and subject_lc again
 * with their field's tag (0025: a negated field term is then answered by the index too). Its
 * definition is the view inbox_grams_source (0025), which test/integration checks this against.
 */
export function shortGramsOf(fields: readonly string[]): string[] {
  const grams = [...freeTextGramsOf(fields)];
  SEARCH_FIELDS.forEach(({ tag }, i) => {
    if (tag !== undefined) for (const gram of freeTextGramsOf([fields[i]!])) grams.push(fieldGram(tag, gram));
  });
  return grams;
}

/**
 * PostgreSQL holds an entry's grams as a tsvector, at most 1 MB of lexemes (0024; past it
 * array_to_tsvector returns one that misses some, with no error: 3.6 MB, PostgreSQL 15). An entry whose
 * grams pass MAX_GRAM_BYTES (a subject or a To of many thousand characters in a script of many)
 * holds EVERY_ENTRY_GRAM and GRAMS_OVERFLOW instead, which every query of the index of short
 * terms also matches: strpos() decides for it, as before 0020. Never a gram: neither a free-text
 * one (one or two code points) nor a field's (three or four, a tag's colon second).
 */
export const GRAMS_OVERFLOW = 'grams overflow';
const MAX_GRAM_BYTES = 500_000;

function postgresGramsOf(fields: readonly string[]): string[] {
  const grams = shortGramsOf(fields);
  return Buffer.byteLength(grams.join(''), 'utf8') > MAX_GRAM_BYTES ? [EVERY_ENTRY_GRAM, GRAMS_OVERFLOW] : grams;
}

const ASCII_HEX = Array.from({ length: 0x80 }, (_, code) => code.toString(16).toUpperCase().padStart(2, '0'));

/**
 * A gram as SQLite's inbox_grams holds it (0020): one token of the ASCII tokenizer, the hex of its
 * UTF-8 bytes. An ASCII gram's bytes are its char codes, read from a table: an entry has about 200
 * grams, and a Buffer for each was most of the indexer's main-thread time per entry.
 */
export function gramToken(gram: string): string {
  let token = '';
  for (let i = 0; i < gram.length; i++) {
    const code = gram.charCodeAt(i);
    if (code >= 0x80) return Buffer.from(gram, 'utf8').toString('hex').toUpperCase();
    token += ASCII_HEX[code]!;
  }
  return token;
}

/** Keys of the ASCII grams: one character c is c, two (c, d) are 128 + 128 * c + d. */
const ASCII_GRAM_KEYS = 128 + 128 * 128;
/** The token of each ASCII gram by its key, per tag ('' for free text): made on first use, kept. */
const asciiGramTokens = new Map<string, string[]>();
/** The ASCII grams one gram set holds so far: those whose entry is `gramSet`. */
const asciiGramsSeen = new Int32Array(ASCII_GRAM_KEYS);
let gramSet = 0;

/**
 * Appends the tokens of the grams of `fields` (freeTextGramsOf, in its order), each with `tag`
 * first, to `tokens`. An ASCII gram is a key into tables, not a string of its own: the indexer
 * did this for every entry, about 300 grams each, and its strings and Sets were a quarter of the
 * main thread's allocations during end to end (BENCHMARKS.md, issue 24, session 13).
 */
function appendGramTokens(fields: readonly string[], tag: string, tokens: string[]): void {
  if (++gramSet === 0x7fffffff) {
    asciiGramsSeen.fill(0);
    gramSet = 1;
  }
  let known = asciiGramTokens.get(tag);
  if (!known) asciiGramTokens.set(tag, (known = new Array<string>(ASCII_GRAM_KEYS)));
  const tagToken = gramToken(tag);
  let others: Set<string> | undefined;
  const ascii = (key: number) => {
    if (asciiGramsSeen[key] === gramSet) return;
    asciiGramsSeen[key] = gramSet;
    tokens.push((known[key] ??= tagToken + (key < 128 ? ASCII_HEX[key]! : ASCII_HEX[(key - 128) >> 7]! + ASCII_HEX[(key - 128) & 127]!)));
  };
  const other = (gram: string) => {
    if ((others ??= new Set()).has(gram)) return;
    others.add(gram);
    tokens.push(gramToken(tag + gram));
  };
  for (const field of fields) {
    // Code points as the string iterator yields them: a surrogate pair is one, a lone surrogate one too.
    for (let i = 0; i < field.length; ) {
      const c = field.codePointAt(i)!;
      const next = i + (c > 0xffff ? 2 : 1);
      if (c < 0x80) ascii(c);
      else other(field.slice(i, next));
      if (next < field.length) {
        const d = field.codePointAt(next)!;
        if (c < 0x80 && d < 0x80) ascii(128 + 128 * c + d);
        else other(field.slice(i, next + (d > 0xffff ? 2 : 1)));
      }
      i = next;
    }
  }
}

/** SQLite's inbox_grams text of an entry: `shortGramsOf(fields).map(gramToken).join(' ')`, built without a string per gram. */
export function shortGramTokens(fields: readonly string[]): string {
  const tokens: string[] = [];
  appendGramTokens(fields, '', tokens);
  SEARCH_FIELDS.forEach(({ tag }, i) => {
    if (tag !== undefined) appendGramTokens([fields[i]!], tag, tokens);
  });
  return tokens.join(' ');
}

const NEW_ENTRY_COLUMNS =
  'message_seq, id, from_name, from_address, to_text, subject, snippet, size, attachments, email_id, project_id, received_at, from_lc, to_lc, subject_lc, snippet_lc, header_message_id';
/** PostgreSQL's entries also carry their short grams (0020, a tsvector since 0024); SQLite's are in inbox_grams. */
const NEW_ENTRY_COLUMNS_POSTGRES = `${NEW_ENTRY_COLUMNS}, short_grams`;
/** One row of NEW_ENTRY_COLUMNS, typed where PostgreSQL cannot infer it (SQLite accepts the casts). */
const NEW_ENTRY_TUPLE = '(CAST(? AS BIGINT), ?, ?, ?, ?, ?, ?, CAST(? AS INTEGER), CAST(? AS INTEGER), ?, ?, ?, ?, ?, ?, ?, ?)';
const NEW_ENTRY_TUPLE_POSTGRES = `${NEW_ENTRY_TUPLE.slice(0, -1)}, array_to_tsvector(CAST(? AS TEXT[])))`;
/** Entries per INSERT: 17 to 19 parameters each, under both backends' parameter limits. */
const ENTRIES_PER_STATEMENT = 500;

/** SQLite's entries through the view of 0031: each row also carries its short grams and its tag terms. */
const NEW_ENTRY_TUPLE_SQLITE = `${NEW_ENTRY_TUPLE.slice(0, -1)}, ?, ?)`;

/**
 * Inserts entries whose message still exists (a delete may have come first) and their tag terms,
 * in a few multi-row statements (the indexer's group commit, the bench's fill); returns those kept.
 * On SQLite one statement a chunk writes the entries, their short grams and their tag terms (the
 * view inbox_intake, 0031), one trip of the writer instead of three; on PostgreSQL the entries
 * (their grams in the row), then their tag terms.
 */
export async function insertInboxEntries(tx: Queryable, entries: readonly NewInboxEntry[]): Promise<InboxEntry[]> {
  const postgres = tx.dialect === 'postgres';
  const inserted = new Set<number>();
  for (let i = 0; i < entries.length; i += ENTRIES_PER_STATEMENT) {
    const chunk = entries.slice(i, i + ENTRIES_PER_STATEMENT);
    const values = chunk.flatMap(({ seq, message_id_term, tag_terms, ...e }) => {
      const fields = searchFieldsOf(e);
      return [
        seq,
        e.id,
        e.from_name,
        e.from_address,
        e.to,
        e.subject,
        e.snippet,
        e.size,
        e.attachments,
        e.email_id,
        e.project_id,
        e.received_at,
        ...fields,
        message_id_term,
        ...(postgres ? [postgresGramsOf(fields)] : [shortGramTokens(fields), JSON.stringify(tag_terms)]),
      ];
    });
    // VALUES names its columns column1, column2, ... on both backends; WHERE also keeps SQLite
    // from reading ON CONFLICT as a join's ON. The view's trigger skips what the WHERE and ON
    // CONFLICT do here (RAISE(IGNORE): the row is left out of RETURNING too).
    const rows = await tx.all<{ message_seq: number }>(
      postgres
        ? `INSERT INTO inbox_entries (${NEW_ENTRY_COLUMNS_POSTGRES})
           SELECT * FROM (VALUES ${chunk.map(() => NEW_ENTRY_TUPLE_POSTGRES).join(', ')}) v
            WHERE EXISTS (SELECT 1 FROM captured_messages m WHERE m.seq = v.column1)
           ON CONFLICT DO NOTHING RETURNING message_seq`
        : `INSERT INTO inbox_intake (${NEW_ENTRY_COLUMNS}, grams, tag_terms_json)
           VALUES ${chunk.map(() => NEW_ENTRY_TUPLE_SQLITE).join(', ')} RETURNING message_seq`,
      values,
    );
    for (const r of rows) inserted.add(Number(r.message_seq));
  }
  const kept = entries.filter((e) => inserted.has(e.seq));
  if (postgres) {
    await insertRows(tx, 'inbox_tags', ['term', 'message_seq'], kept.flatMap((e) => e.tag_terms.map((term) => ({ term, message_seq: e.seq }))), 'ON CONFLICT DO NOTHING');
  }
  return kept.map(({ seq: _s, message_id_term: _m, tag_terms: _t, ...e }) => ({ ...e, read: false }));
}

/**
 * What finds the entries whose grams lack their fields' tagged ones (indexed before 0025): every
 * entry indexed since holds `f: ` (from_lc holds a space), and one past PostgreSQL's limit of
 * grams holds GRAMS_OVERFLOW (0024) whatever its fields.
 */
const withoutFieldGrams = (dialect: Db['dialect']) =>
  dialect === 'postgres'
    ? `${lexeme(EVERY_ENTRY_GRAM)} & !${lexeme(fieldGram(SEARCH_FIELDS[0].tag, EVERY_ENTRY_GRAM))} & !${lexeme(GRAMS_OVERFLOW)}`
    : `${phrase(gramToken(EVERY_ENTRY_GRAM))} NOT ${phrase(gramToken(fieldGram(SEARCH_FIELDS[0].tag, EVERY_ENTRY_GRAM)))}`;

/**
 * Gives up to `limit` entries indexed before 0025 their fields' tagged grams, from after
 * `afterSeq` (the indexer's backfill at start, oldest first, a batch a transaction between
 * captures); returns how many it rewrote and the last one's seq, where the next batch starts. Migration 0025's view would have cost 0.5 ms of CPU an entry on SQLite, 1.2 ms of the
 * server's on PostgreSQL (minutes at 100,000 entries, before the relay could start); the grams
 * computed in JS cost the writer what rewriting them does (the search bench prints it). Meanwhile
 * the searches are exact all the same: a positive field term asks for the untagged gram, which
 * every entry holds, and a negated one excludes only the entries holding the tagged gram (the
 * others are instr()'s to decide).
 */
export async function addFieldGrams(tx: Queryable, limit: number, afterSeq = 0): Promise<{ count: number; lastSeq: number }> {
  const postgres = tx.dialect === 'postgres';
  type FieldsRow = { seq: number } & Record<'from_lc' | 'to_lc' | 'subject_lc' | 'snippet_lc', string>;
  const rows = await tx.all<FieldsRow>(
    postgres
      ? `SELECT message_seq AS seq, from_lc, to_lc, subject_lc, snippet_lc FROM inbox_entries
          WHERE short_grams @@ CAST(? AS TSQUERY) AND message_seq > ? ORDER BY message_seq LIMIT ?`
      : `SELECT e.message_seq AS seq, e.from_lc, e.to_lc, e.subject_lc, e.snippet_lc FROM inbox_grams g JOIN inbox_entries e ON e.message_seq = g.rowid
          WHERE inbox_grams MATCH ? AND g.rowid > ? ORDER BY g.rowid LIMIT ?`,
    [withoutFieldGrams(tx.dialect), afterSeq, limit],
  );
  await replaceShortGrams(
    tx,
    rows.map((r) => {
      const fields = [r.from_lc, r.to_lc, r.subject_lc, r.snippet_lc];
      return { seq: Number(r.seq), grams: postgres ? postgresGramsOf(fields) : shortGramsOf(fields) };
    }),
  );
  return { count: rows.length, lastSeq: rows.length === 0 ? afterSeq : Number(rows[rows.length - 1]!.seq) };
}

/** Replaces the grams the index of short terms holds for entries (addFieldGrams; the search bench's measure of their cost). */
export async function replaceShortGrams(tx: Queryable, entries: ReadonlyArray<{ seq: number; grams: readonly string[] }>): Promise<void> {
  for (let i = 0; i < entries.length; i += ENTRIES_PER_STATEMENT) {
    const chunk = entries.slice(i, i + ENTRIES_PER_STATEMENT);
    if (tx.dialect === 'postgres') {
      await tx.run(
        `UPDATE inbox_entries e SET short_grams = array_to_tsvector(v.grams)
           FROM (VALUES ${chunk.map(() => '(CAST(? AS BIGINT), CAST(? AS TEXT[]))').join(', ')}) v(seq, grams) WHERE e.message_seq = v.seq`,
        chunk.flatMap((e) => [e.seq, e.grams]),
      );
      continue;
    }
    const seqs = inValues(tx, 'rowid', chunk.map((e) => e.seq));
    await tx.run(`DELETE FROM inbox_grams WHERE ${seqs.sql}`, seqs.params);
    await insertRows(tx, 'inbox_grams', ['rowid', 'grams'], chunk.map((e) => ({ rowid: e.seq, grams: e.grams.map(gramToken).join(' ') })));
  }
}

/** Trigrams index terms of three characters (code points) or more; shorter ones have their own index (0020). */
const MIN_INDEXED_CHARS = 3;
/** The column and the grams' tag of each field a term can name. */
const FIELD_TERMS = { from: SEARCH_FIELDS[0], to: SEARCH_FIELDS[1], subject: SEARCH_FIELDS[2] } as const;

/** A LIKE pattern matching `term` anywhere: its own %, _ and \ escaped (PostgreSQL's default escape is \). */
const likeSubstring = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** A GLOB pattern matching `term` anywhere (SQLite): its own *, ? and [ each in a class of its own. */
const globSubstring = (term: string) => `*${term.replace(/[*?[]/g, (c) => `[${c}]`)}*`;

/** An FTS5 phrase: the term in double quotes, its own quotes doubled. */
const phrase = (term: string) => `"${term.replace(/"/g, '""')}"`;

/** A tsquery lexeme taken as it is: quoted, its quotes doubled and its backslashes escaped. */
const lexeme = (gram: string) => `'${gram.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/**
 * What the index of short terms (0020) is asked: the entries holding every gram of `holds` and
 * none of `lacks`, as an FTS5 query of inbox_grams or a tsquery of PostgreSQL's short_grams (0024).
 * With nothing to hold, every entry holds EVERY_ENTRY_GRAM: both indexes answer a negation only
 * beside a positive term, by merging the two posting lists (no entry is read).
 */
function gramQuery(dialect: Db['dialect'], holds: readonly string[], lacks: readonly string[]): string {
  const base = holds.length > 0 ? holds : [EVERY_ENTRY_GRAM];
  if (dialect === 'postgres') return `(${[...base.map(lexeme), ...lacks.map((g) => `!${lexeme(g)}`)].join(' & ')}) | ${lexeme(GRAMS_OVERFLOW)}`;
  return `(${base.map((g) => phrase(gramToken(g))).join(' AND ')})${lacks.map((g) => ` NOT ${phrase(gramToken(g))}`).join('')}`;
}

/** Where a page of the inbox ends: its last entry (the API's cursor encodes it). */
export interface InboxCursor {
  seq: number;
  receivedAt: string;
}

/**
 * A page of the inbox, newest first, after the `before` entry. Terms of three characters or more
 * go to the trigram index (inbox_search, walked newest first from the cursor); without one, the
 * first tag: term's rows (inbox_tags) are walked; without either, the entries: by capture time
 * when a before:/after: term bounds it (inbox_by_received, from the bound: the oldest mail is a
 * lookup, not a walk past everything newer), else by the primary key (or a message-id:'s index,
 * or is:unread's partial index, or for a negated term of three characters or more the narrow
 * rows of inbox_search_text). Terms under three characters are instr() over the lower-cased
 * columns. A page stops after `limit + 1` matches.
 */
export async function searchInbox(
  db: Pick<Db, 'all' | 'dialect'>,
  search: InboxSearch,
  page: { before?: InboxCursor; limit: number },
): Promise<{ entries: InboxEntry[]; next: InboxCursor | null }> {
  const where: string[] = [];
  const params: unknown[] = [];
  const match: string[] = [];
  // PostgreSQL's instr is strpos. Its trigram indexes (pg_trgm GIN, migration 0014) serve LIKE
  // '%term%' for terms of three characters or more, as FTS5's trigram index does on SQLite.
  const instr = db.dialect === 'postgres' ? 'strpos' : 'instr';
  let trigramTerms = 0; // PostgreSQL's, which its planner may drive from
  // Terms of one or two characters (code points, as both indexes count them): the index of
  // short terms (0020) finds the entries holding them in some field; instr() below checks the
  // field. (Not the field's tagged gram: an entry indexed before 0025 may not hold it yet.)
  const shortTerms: string[] = [];
  // Negated terms of one or two characters: an entry lacks the term in every field (in the one
  // field named) exactly when its grams (that field's tagged grams, 0025) lack it, since they are
  // every such substring of the same fields, so the index answers them too; instr() still checks
  // each row it yields (an entry not yet given its tagged grams is one of them).
  const lackedShortTerms: string[] = [];
  const substringOf = (columns: string[], term: string) => {
    where.push(`(${columns.map((c) => `${instr}(e.${c}, ?) > 0`).join(' OR ')})`);
    params.push(...columns.map(() => term));
  };
  const contains = (columns: string[], term: string) => {
    const chars = [...term].length;
    if (chars >= MIN_INDEXED_CHARS && db.dialect !== 'postgres') {
      // FTS5's trigram tokenizer folds case by Unicode (`sun` finds "ſun", `σ` finds "ς"); instr()
      // over the lower-cased columns decides, as LIKE does on PostgreSQL, so both backends agree.
      match.push(columns.length === 1 ? `${columns[0]} : ${phrase(term)}` : phrase(term));
      substringOf(columns, term);
      return;
    }
    if (chars >= MIN_INDEXED_CHARS) {
      trigramTerms += 1;
      where.push(`(${columns.map((c) => `e.${c} LIKE ?`).join(' OR ')})`);
      params.push(...columns.map(() => likeSubstring(term)));
      return;
    }
    shortTerms.push(term);
    substringOf(columns, term);
  };
  const TEXT_COLUMNS = ['subject_lc', 'from_lc', 'to_lc', 'snippet_lc'];
  // Negated terms of three characters or more, which narrow rows can check: free text in
  // inbox_search_text's joined fields (0026; none holds their separator, char(1)), a field term in
  // its column of inbox_search_fields (0028); none holds a NUL, where SQLite's GLOB stops reading.
  // When no index drives, those rows are scanned instead of the entries.
  const lackedLongTerms: Array<{ column: string; term: string }> = [];
  // A negated longer term is checked row by row: no index lists what an entry lacks.
  const lacks = (columns: string[], term: string, tag?: string) => {
    where.push(`NOT (${columns.map((c) => `${instr}(e.${c}, ?) > 0`).join(' OR ')})`);
    params.push(...columns.map(() => term));
    if ([...term].length < MIN_INDEXED_CHARS) lackedShortTerms.push(tag === undefined ? term : fieldGram(tag, term));
    else if (term.includes('\u0000')) return;
    else if (columns === TEXT_COLUMNS) {
      if (!term.includes(SEARCH_TEXT_SEPARATOR)) lackedLongTerms.push({ column: 'text', term });
    } else lackedLongTerms.push({ column: columns[0]!, term });
  };
  for (const field of ['from', 'to', 'subject'] as const) {
    const { column, tag } = FIELD_TERMS[field];
    for (const term of search[field]) contains([column], term);
    for (const term of search.exclude[field]) lacks([column], term, tag);
  }
  for (const term of search.text) contains(TEXT_COLUMNS, term);
  for (const term of search.exclude.text) lacks(TEXT_COLUMNS, term);
  if (search.attachments !== undefined) where.push(search.attachments ? 'e.attachments > 0' : 'e.attachments = 0');
  for (const { op, at } of search.received) {
    where.push(`e.received_at ${op} ?`);
    params.push(at);
  }
  for (const { op, bytes } of search.size) {
    where.push(`e.size ${op} ?`);
    params.push(bytes);
  }
  for (const id of search.projects.include) {
    where.push('e.project_id = ?');
    params.push(id);
  }
  for (const id of search.projects.exclude) {
    where.push('(e.project_id IS NULL OR e.project_id <> ?)');
    params.push(id);
  }
  const tagged = (term: string) => {
    params.push(term);
    return 'EXISTS (SELECT 1 FROM inbox_tags t WHERE t.term = ? AND t.message_seq = e.message_seq)';
  };
  // Without a trigram term, the first tag: term drives (its primary key, newest first); with one,
  // tags are a filter (EXPLAIN on PostgreSQL: tag:plan=pro "order 42" walked a third of both
  // tables in a merge join, 240 ms, where the trigram index finds 1,111 rows). With a short term
  // (or a negated one), on SQLite the rarer of the tag and the short terms drives (tag:receipt -e:
  // the tag walks two thirds of the mail, the index of short terms finds none), on PostgreSQL its
  // planner chooses (the text terms' path below).
  const shortIndexed = shortTerms.length > 0 || lackedShortTerms.length > 0;
  const shortMatch = gramQuery(db.dialect, shortTerms, lackedShortTerms);
  let tagDrives = match.length === 0 && trigramTerms === 0;
  // Every result holds what the index of short terms is asked: when it finds nothing, neither
  // does the search (tag:receipt -e, order -e), and the probe was the whole cost.
  const noShortMatch = { entries: [], next: null };
  if (tagDrives && shortIndexed && search.tags.length > 0 && search.messageIds.length === 0) {
    if (db.dialect === 'postgres') tagDrives = false;
    else {
      const grams = await matchesUpTo(db, 'inbox_grams', shortMatch);
      if (grams === 0) return noShortMatch;
      tagDrives = (await taggedUpTo(db, search.tags[0]!)) <= grams;
    }
  }
  const [drivingTag, ...otherTags] = tagDrives ? search.tags : [];
  for (const term of tagDrives ? otherTags : search.tags) where.push(tagged(term));
  for (const term of search.exclude.tags) where.push(`NOT ${tagged(term)}`);
  for (const id of search.messageIds) {
    where.push('e.header_message_id = ?');
    params.push(id);
  }
  for (const id of search.exclude.messageIds) {
    where.push("COALESCE(e.header_message_id, '') <> ?");
    params.push(id);
  }
  if (search.unread === true) where.push('e.read_at IS NULL');
  if (search.unread === false) where.push('e.read_at IS NOT NULL');
  if (search.project !== undefined) {
    where.push('e.project_id = ?');
    params.push(search.project);
  }

  // SQLite, both short and longer terms: the index whose terms are rarer drives, the other's are
  // checked row by row (zq from:billing: the trigram index would walk a quarter of the mail;
  // order -e: it would walk all of it, where the index of short terms finds nothing at once).
  if (match.length > 0 && shortIndexed && search.messageIds.length === 0) {
    const grams = await matchesUpTo(db, 'inbox_grams', shortMatch);
    if (grams === 0) return noShortMatch;
    if (grams < (await matchesUpTo(db, 'inbox_search', match.join(' AND ')))) {
      match.length = 0;
    }
  }

  let sql: string;
  const bySeq = (column: string) => {
    if (page.before === undefined) return;
    where.unshift(`${column} < ?`);
    params.unshift(page.before.seq);
  };
  if (match.length > 0) {
    bySeq('s.rowid');
    sql = `SELECT ${E_ENTRY_COLUMNS}
             FROM inbox_search s JOIN inbox_entries e ON e.message_seq = s.rowid
            WHERE inbox_search MATCH ? ${where.map((w) => `AND ${w}`).join(' ')}
            ORDER BY s.rowid DESC LIMIT ?`;
    params.unshift(match.join(' AND '));
  } else if (drivingTag !== undefined) {
    bySeq('d.message_seq');
    sql = `SELECT ${E_ENTRY_COLUMNS}
             FROM inbox_tags d JOIN inbox_entries e ON e.message_seq = d.message_seq
            WHERE d.term = ? ${where.map((w) => `AND ${w}`).join(' ')}
            ORDER BY d.message_seq DESC LIMIT ?`;
    params.unshift(drivingTag);
  } else if (search.received.length > 0 && search.messageIds.length === 0) {
    // Newest first by capture time (capture order but for a clock set back), from the bound.
    if (page.before !== undefined) {
      where.push('(e.received_at, e.message_seq) < (?, ?)');
      params.push(page.before.receivedAt, page.before.seq);
    }
    const indexed = db.dialect === 'postgres' ? '' : 'INDEXED BY inbox_by_received';
    sql = `SELECT ${ENTRY_COLUMNS} FROM inbox_entries e ${indexed} WHERE ${where.join(' AND ')}
            ORDER BY e.received_at DESC, e.message_seq DESC LIMIT ?`;
  } else if (shortIndexed && search.messageIds.length === 0 && db.dialect !== 'postgres') {
    // SQLite: inbox_grams yields the entries holding every short term and lacking every negated one, newest first.
    bySeq('g.rowid');
    sql = `SELECT ${E_ENTRY_COLUMNS}
             FROM inbox_grams g JOIN inbox_entries e ON e.message_seq = g.rowid
            WHERE inbox_grams MATCH ? ${where.map((w) => `AND ${w}`).join(' ')}
            ORDER BY g.rowid DESC LIMIT ?`;
    params.unshift(shortMatch);
  } else if (db.dialect === 'postgres' && (trigramTerms > 0 || shortIndexed) && search.messageIds.length === 0) {
    // PostgreSQL, text terms: its planner, given ORDER BY message_seq and a LIMIT, walks the
    // primary key newest first hoping to meet matches soon, and mail that matches only long ago
    // defeats it (EXPLAIN at 100,000: "order 42" walked 57,000 entries, " 1" 80,000). So the
    // newest entries are scanned first, where a common term fills its page; when they hold less,
    // the order is hidden from the planner (+ 0) so that the indexes find every match, then sorted:
    // short terms, negated or not, through the GIN index of short_grams as a tsvector (0024).
    bySeq('e.message_seq');
    const newest = await newestPage(db, where, params, page);
    if (newest) return newest;
    if (shortIndexed) {
      where.push('e.short_grams @@ CAST(? AS TSQUERY)');
      params.push(shortMatch);
    }
    sql = `SELECT ${ENTRY_COLUMNS} FROM inbox_entries e WHERE ${where.join(' AND ')} ORDER BY e.message_seq + 0 DESC LIMIT ?`;
  } else if (lackedLongTerms.length > 0 && search.messageIds.length === 0 && search.unread !== true) {
    // Negated longer terms and no index to drive: proving that an entry lacks the term takes a
    // look at it, at every entry when (almost) every one holds it (-order, -subject:receipt). The
    // narrow rows are checked instead, free text in inbox_search_text (0026), a field term in its
    // column of inbox_search_fields (0028; the narrower, walked first when there are both kinds)
    // (SQLite: GLOB, walked newest first; PostgreSQL: LIKE), and an entry is read only when its row
    // lacks every term; the checks on
    // its own fields above stay, so the results are theirs. PostgreSQL, as for text terms above:
    // the newest entries first, then the order hidden from its planner, which scans the narrow
    // rows and sorts what is left (it would walk them newest first by the primary key when its
    // statistics say many lack the term, all of them when those are only the oldest).
    const narrow = [
      ...(lackedLongTerms.some((l) => l.column !== 'text') ? [{ table: 'inbox_search_fields', alias: 'f' }] : []),
      ...(lackedLongTerms.some((l) => l.column === 'text') ? [{ table: 'inbox_search_text', alias: 't' }] : []),
    ];
    const outer = narrow[0]!.alias;
    if (db.dialect === 'postgres') {
      bySeq('e.message_seq');
      const newest = await newestPage(db, where, params, page);
      if (newest) return newest;
    } else bySeq(`${outer}.message_seq`);
    // SQLite's GLOB (case-sensitive, as LIKE is on PostgreSQL) costs 15 ms of CPU at 100,000 rows where instr costs 21 to 32.
    for (const { column, term } of lackedLongTerms) {
      const alias = column === 'text' ? 't' : 'f';
      where.push(db.dialect === 'postgres' ? `${alias}.${column} NOT LIKE ?` : `${alias}.${column} NOT GLOB ?`);
      params.push(db.dialect === 'postgres' ? likeSubstring(term) : globSubstring(term));
    }
    // CROSS JOIN: SQLite keeps the narrow rows as the outer loops, in this order (PostgreSQL plans it as a join).
    sql = `SELECT ${E_ENTRY_COLUMNS}
             FROM ${narrow.map((n) => `${n.table} ${n.alias} CROSS JOIN `).join('')}inbox_entries e
            WHERE ${['e', ...narrow.slice(1).map((n) => n.alias)].map((a) => `${a}.message_seq = ${outer}.message_seq`).join(' AND ')} ${where.map((w) => `AND ${w}`).join(' ')}
            ORDER BY ${outer}.message_seq ${db.dialect === 'postgres' ? '+ 0 ' : ''}DESC LIMIT ?`;
  } else {
    bySeq('e.message_seq');
    // The partial index serves is:unread (unless a Message-ID, rarer still, has its own); otherwise the primary key walks newest first.
    const indexed = search.unread === true && search.messageIds.length === 0 && db.dialect !== 'postgres' ? 'INDEXED BY inbox_unread' : '';
    sql = `SELECT ${ENTRY_COLUMNS} FROM inbox_entries e ${indexed} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
            ORDER BY e.message_seq DESC LIMIT ?`;
  }
  return pageOf(await db.all<EntryRow>(sql, [...params, page.limit + 1]), page.limit);
}

/**
 * What joins an entry's four lower-cased search fields in inbox_search_text (0026: char(1), chr(1)):
 * a term without it matches the joined text exactly where it matches one of the fields.
 */
export const SEARCH_TEXT_SEPARATOR = '\u0001';

/** How many of the newest entries PostgreSQL scans for text terms before its indexes find the rest. */
const NEWEST_SCANNED = 1000;

/** PostgreSQL: the page among the NEWEST_SCANNED newest entries (after the cursor), when they fill it. */
async function newestPage(
  db: Pick<Db, 'all'>,
  where: readonly string[],
  params: readonly unknown[],
  page: { before?: InboxCursor; limit: number },
): Promise<{ entries: InboxEntry[]; next: InboxCursor | null } | undefined> {
  const newest = await db.all<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM (SELECT * FROM inbox_entries ${page.before === undefined ? '' : 'WHERE message_seq < ?'}
                                    ORDER BY message_seq DESC LIMIT ${NEWEST_SCANNED}) e
      WHERE ${where.join(' AND ')} ORDER BY e.message_seq DESC LIMIT ?`,
    [...(page.before === undefined ? [] : [page.before.seq]), ...params, page.limit + 1],
  );
  return newest.length > page.limit ? pageOf(newest, page.limit) : undefined;
}

/** How many matches of an FTS5 query are counted, at most, to tell which index is the rarer. */
const PROBE_MATCHES = 1000;

/** The entries an FTS5 table (inbox_search, inbox_grams) matches, counted up to PROBE_MATCHES. */
async function matchesUpTo(db: Pick<Db, 'all'>, table: 'inbox_search' | 'inbox_grams', query: string): Promise<number> {
  const [row] = await db.all<{ n: number }>(`SELECT count(*) AS n FROM (SELECT rowid FROM ${table} WHERE ${table} MATCH ? LIMIT ${PROBE_MATCHES})`, [query]);
  return Number(row!.n);
}

/** The entries holding a tag term, counted up to PROBE_MATCHES. */
async function taggedUpTo(db: Pick<Db, 'all'>, term: string): Promise<number> {
  const [row] = await db.all<{ n: number }>(`SELECT count(*) AS n FROM (SELECT 1 FROM inbox_tags WHERE term = ? LIMIT ${PROBE_MATCHES}) t`, [term]);
  return Number(row!.n);
}

/** A page from up to `limit + 1` rows: the next page starts after its last entry when there was one more. */
function pageOf(rows: readonly EntryRow[], limit: number): { entries: InboxEntry[]; next: InboxCursor | null } {
  const entries = rows.slice(0, limit);
  return {
    entries: entries.map(entryView),
    next: rows.length > limit ? { seq: entries[entries.length - 1]!.message_seq, receivedAt: entries[entries.length - 1]!.received_at } : null,
  };
}

/** Unread messages in the whole inbox, or in one project's. */
export async function countUnread(db: Pick<Db, 'get' | 'dialect'>, project?: string): Promise<number> {
  if (project !== undefined) {
    const row = await db.get<{ n: number }>('SELECT count(*) AS n FROM inbox_entries WHERE project_id = ? AND read_at IS NULL', [project]);
    return Number(row?.n ?? 0);
  }
  const indexed = db.dialect === 'postgres' ? '' : 'INDEXED BY inbox_unread'; // PostgreSQL picks the partial index itself
  const row = await db.get<{ n: number }>(`SELECT count(*) AS n FROM inbox_entries ${indexed} WHERE read_at IS NULL`);
  return Number(row?.n ?? 0);
}

/** Unread messages per project (only projects with some); mail of no project is in countUnread's total only. */
export async function countUnreadByProject(db: Pick<Db, 'all'>): Promise<Array<{ project_id: string; unread: number }>> {
  const rows = await db.all<{ project_id: string; unread: number }>(
    'SELECT project_id, count(*) AS unread FROM inbox_entries WHERE read_at IS NULL AND project_id IS NOT NULL GROUP BY project_id ORDER BY project_id',
  );
  return rows.map((r) => ({ project_id: r.project_id, unread: Number(r.unread) }));
}

export async function getInboxEntry(db: Pick<Db, 'get'>, id: string): Promise<InboxEntry | undefined> {
  const row = await db.get<EntryRow>(`SELECT ${ENTRY_COLUMNS} FROM inbox_entries WHERE id = ?`, [id]);
  return row ? entryView(row) : undefined;
}

/** Marks a message read or unread; false when there is no such message. */
export async function setRead(tx: Queryable, id: string, read: boolean, now: string): Promise<boolean> {
  const { changes } = await tx.run('UPDATE inbox_entries SET read_at = ? WHERE id = ?', [read ? now : null, id]);
  return changes > 0;
}

/** Deletes one captured message and its entry; false when there was none. */
export async function deleteCapturedMessage(tx: Queryable, id: string): Promise<boolean> {
  await tx.run('DELETE FROM inbox_tags WHERE message_seq IN (SELECT message_seq FROM inbox_entries WHERE id = ?)', [id]);
  await tx.run('DELETE FROM inbox_entries WHERE id = ?', [id]);
  await deleteCheckSummaries(tx, id);
  await tx.run('DELETE FROM captured_recipients WHERE message_id = ?', [id]);
  const { changes } = await tx.run('DELETE FROM captured_messages WHERE id = ?', [id]);
  return changes > 0;
}
