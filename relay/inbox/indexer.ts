// Fills the inbox (storage/inbox.ts) from the captured mail the sink could not index itself: the
// sink parses each message on a worker thread and stores its entry in the capture's own commit;
// when it cannot (no parse), it announces the capture ('message.captured' on the bus, not indexed),
// and the indexer parses it, writes the entries of everything waiting in one group commit, then announces them
// ('inbox.captured') to the open dashboards. At start it catches up on any message it missed, and
// reads the search terms (tags, Message-ID) of entries written before migration 0016.
import type { RelayServices } from '../services.js';
import {
  capturedForIndexing,
  entriesWithoutSearchTerms,
  insertInboxEntries,
  saveSearchTerms,
  unindexedMessages,
  type InboxEntry,
  type NewInboxEntry,
} from '../storage/inbox.js';
import { offload } from '../threads/work.js';
import { newInboxEntry } from './read-message.js';
import { entryTerms } from './search-terms.js';

const CATCH_UP_BATCH = 500;
/** Entries per backfill transaction (each reads up to 64 KiB of its raw message). */
const BACKFILL_BATCH = 200;


export interface InboxIndexer {
  /** Resolves once everything announced so far is indexed (tests, bench). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export function startInboxIndexer(services: RelayServices): InboxIndexer {
  const { db, bus, log } = services;
  const waiting = new Set<string>();
  let running: Promise<void> | undefined;
  let stopped = false;

  async function entryFor(id: string): Promise<NewInboxEntry | undefined> {
    const row = await capturedForIndexing(db, id);
    if (!row) return undefined;
    // Parsed on a worker thread (relay/threads/), here when none can.
    const summary = await offload(log, 'inboxSummary', { raw: row.raw, envelope: { from: row.envelope_from, to: JSON.parse(row.envelope_to_json) as string[] } });
    return newInboxEntry({ ...row, id }, summary);
  }

  async function indexWaiting(): Promise<void> {
    while (waiting.size > 0 && !stopped) {
      const ids = [...waiting];
      waiting.clear();
      // All at once: the parses run side by side on the worker threads.
      const found = await Promise.all(
        ids.map((id) =>
          entryFor(id).catch((error: unknown) => {
            log.error('inbox', 'cannot index a captured message', { message_id: id, error: (error as Error).message });
            return undefined;
          }),
        ),
      );
      const entries = found.filter((entry) => entry !== undefined);
      if (entries.length === 0) continue;
      const kept: InboxEntry[] = await db.write((tx) => insertInboxEntries(tx, entries));
      if (kept.length > 0) bus.emit('inbox.captured', kept);
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

  const onCaptured = (id: string, indexed: boolean) => {
    if (indexed) return; // the sink stored its entry with it
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

  return {
    async idle() {
      await catchUp;
      while (running) await running;
    },
    async stop() {
      stopped = true;
      bus.off('message.captured', onCaptured);
      await catchUp;
      while (running) await running;
    },
  };
}
