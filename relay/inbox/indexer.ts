// Fills the inbox (storage/inbox.ts) from captured mail: the sink announces each capture after its
// commit ('message.captured' on the bus), and the indexer parses it once, off the sink's hot path,
// writes the entries of everything waiting, then announces them ('inbox.captured') to the open
// dashboards. While mail streams in (CaptureActivity) it waits, up to MAX_DELAY_MS, and then takes
// everything that came meanwhile in one batch: one read of the batch's rows, the parses side by
// side on the worker threads, the entries written in a few units of one group commit, between
// which the sink's captures cut in and share its fsync. A quiet sink's mail is indexed at once.
// At start it catches up on any message it missed, and reads the search terms (tags, Message-ID)
// of entries written before migration 0016.
import type { RelayServices } from '../services.js';
import { capturedRaws } from '../storage/captured.js';
import {
  addFieldGrams,
  capturedForIndexing,
  entriesWithoutSearchTerms,
  insertInboxEntries,
  saveSearchTerms,
  unindexedMessages,
  type EntrySearchTerms,
  type CapturedForIndexing,
  type InboxEntry,
  type NewInboxEntry,
} from '../storage/inbox.js';
import { offload } from '../threads/work.js';
import type { SummaryJob } from '../threads/tasks.js';
import type { MessageSummary } from './read-message.js';
import { searchTermsOf } from './search-terms.js';

const CATCH_UP_BATCH = 500;
/** While the sink is busy, how long captured mail may wait for its entry (a dashboard's live row). */
const MAX_DELAY_MS = 200;
/** Messages per batch; a fuller backlog is indexed without waiting for a quiet sink. */
const MAX_BATCH = 500;
/** Messages parsed and written per unit: captures cut in between units. */
const CHUNK_MESSAGES = 32;
/** Raw bytes read per chunk at most (a larger message alone): 25 MiB messages must not pile up. */
const CHUNK_BYTES = 16 * 1024 * 1024;
/** Entries per backfill transaction (each reads up to 64 KiB of its raw message). */
const BACKFILL_BATCH = 200;
/** Entries given their fields' tagged grams (0025) per transaction: tens of milliseconds of the writer. */
const FIELD_GRAMS_BATCH = 500;

/** The `tag:` and `message-id:` terms of a raw message (or its start) and its email's tags. */
function entryTerms(head: Buffer, tagsJson: string | null): EntrySearchTerms {
  const terms = searchTermsOf(head, tagsJson === null ? null : (JSON.parse(tagsJson) as Record<string, string>));
  return { message_id_term: terms.messageId, tag_terms: terms.tags };
}

export interface InboxIndexer {
  /** Resolves once everything announced so far is indexed (tests, bench). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export interface InboxIndexerOptions {
  /** While the sink is busy, how long captured mail may wait for its entry (default MAX_DELAY_MS). */
  maxDelayMs?: number;
}

export function startInboxIndexer(services: RelayServices, options: InboxIndexerOptions = {}): InboxIndexer {
  const maxDelayMs = options.maxDelayMs ?? MAX_DELAY_MS;
  const { db, bus, log } = services;
  const waiting = new Set<string>();
  let running: Promise<void> | undefined;
  let stopped = false;

  const stopping = new AbortController();

  function entryOf(row: CapturedForIndexing, raw: Buffer, summary: MessageSummary): NewInboxEntry {
    return {
      seq: row.seq,
      id: row.id,
      ...summary,
      ...entryTerms(raw, row.tags_json),
      size: row.size,
      email_id: row.email_id,
      project_id: row.project_id,
      received_at: row.received_at,
    };
  }

  const jobOf = (row: CapturedForIndexing, raw: Buffer): SummaryJob => ({ raw, envelope: { from: row.envelope_from, to: JSON.parse(row.envelope_to_json) as string[] } });

  /** The chunk's parses in one hop to a worker thread (here when none can); one by one if that fails, so one bad message costs only its own entry. */
  async function summariesOf(found: Array<{ row: CapturedForIndexing; raw: Buffer }>): Promise<Array<MessageSummary | undefined>> {
    try {
      return await offload(log, 'inboxSummaries', found.map(({ row, raw }) => jobOf(row, raw)));
    } catch {
      return Promise.all(
        found.map(({ row, raw }) =>
          offload(log, 'inboxSummary', jobOf(row, raw)).catch((error: unknown) => {
            log.error('inbox', 'cannot index a captured message', { message_id: row.id, error: (error as Error).message });
            return undefined;
          }),
        ),
      );
    }
  }

  /** Reads, parses and writes one chunk; the entries are announced once committed. */
  async function indexChunk(rows: CapturedForIndexing[]): Promise<void> {
    const raws = await capturedRaws(db, rows.map((r) => r.id));
    const found = rows.flatMap((row) => {
      const raw = raws.get(row.id);
      return raw === undefined ? [] : [{ row, raw }]; // deleted meanwhile
    });
    if (found.length === 0) return;
    const summaries = await summariesOf(found);
    const entries = found.flatMap(({ row, raw }, i) => {
      const summary = summaries[i];
      return summary === undefined ? [] : [entryOf(row, raw, summary)];
    });
    if (entries.length === 0) return;
    const kept: InboxEntry[] = await db.write((tx) => insertInboxEntries(tx, entries));
    if (kept.length > 0) bus.emit('inbox.captured', kept);
  }

  /** Rows in chunks of at most CHUNK_MESSAGES messages and CHUNK_BYTES raw bytes. */
  function chunksOf(rows: CapturedForIndexing[]): CapturedForIndexing[][] {
    const chunks: CapturedForIndexing[][] = [];
    let chunk: CapturedForIndexing[] = [];
    let bytes = 0;
    for (const row of rows) {
      if (chunk.length > 0 && (chunk.length === CHUNK_MESSAGES || bytes + row.size > CHUNK_BYTES)) {
        chunks.push(chunk);
        chunk = [];
        bytes = 0;
      }
      chunk.push(row);
      bytes += row.size;
    }
    if (chunk.length > 0) chunks.push(chunk);
    return chunks;
  }

  async function indexWaiting(): Promise<void> {
    while (waiting.size > 0 && !stopped) {
      // Captures first: while they stream in, the entries wait and are written in batches.
      if (waiting.size < MAX_BATCH) await services.captureActivity.whenQuiet(maxDelayMs, stopping.signal);
      if (stopped) return; // the next start catches up
      const ids = [...waiting].slice(0, MAX_BATCH);
      for (const id of ids) waiting.delete(id);
      const rows = await capturedForIndexing(db, ids);
      // Each chunk is its own unit of the writer's group; the next chunk parses while it commits.
      const writes: Array<Promise<void>> = [];
      for (const chunk of chunksOf(rows)) {
        writes.push(
          indexChunk(chunk).catch((error: unknown) => log.error('inbox', 'cannot index captured mail', { error: (error as Error).message })),
        );
        if (writes.length >= 2) await writes.shift();
      }
      await Promise.all(writes);
    }
  }

  function schedule(): void {
    running ??= indexWaiting()
      .catch((error: unknown) => log.error('inbox', 'indexing failed', { error: (error as Error).message }))
      .finally(() => {
        running = undefined;
        if (waiting.size > 0 && !stopped) schedule();
      });
  }

  const onCaptured = (id: string) => {
    waiting.add(id);
    schedule();
  };
  bus.on('message.captured', onCaptured);

  const catchUp = (async () => {
    for (;;) {
      const missing = await unindexedMessages(db, CATCH_UP_BATCH);
      if (missing.length === 0 || stopped) return;
      for (const m of missing) waiting.add(m.id);
      schedule();
      await running;
      if (missing.length < CATCH_UP_BATCH) return;
    }
  })()
    .then(backfillSearchTerms)
    .then(backfillFieldGrams)
    .catch((error: unknown) => log.error('inbox', 'catching up failed', { error: (error as Error).message }));

  async function backfillSearchTerms(): Promise<void> {
    for (;;) {
      const rows = await entriesWithoutSearchTerms(db, BACKFILL_BATCH);
      if (rows.length === 0 || stopped) return;
      await db.write(async (tx) => {
        for (const row of rows) await saveSearchTerms(tx, row.seq, entryTerms(row.head, row.tags_json));
      });
      if (rows.length < BACKFILL_BATCH) return;
    }
  }

  /** Entries indexed before migration 0025 get their fields' tagged grams (storage/inbox.ts: addFieldGrams). */
  async function backfillFieldGrams(): Promise<void> {
    for (let after = 0; !stopped; ) {
      const { count, lastSeq } = await db.write((tx) => addFieldGrams(tx, FIELD_GRAMS_BATCH, after));
      if (count < FIELD_GRAMS_BATCH) return;
      after = lastSeq;
    }
  }

  return {
    async idle() {
      await catchUp;
      while (running) await running;
    },
    async stop() {
      stopped = true;
      stopping.abort();
      bus.off('message.captured', onCaptured);
      await catchUp;
      while (running) await running;
    },
  };
}
