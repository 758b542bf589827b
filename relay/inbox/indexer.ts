// Fills the inbox (storage/inbox.ts) from captured mail: the sink announces each capture after its
// commit ('message.captured' on the bus), and the indexer parses it once, off the sink's hot path,
// writes the entries of everything waiting in one group commit, then announces them
// ('inbox.captured') to the open dashboards. At start it catches up on any message it missed, and
// reads the search terms (tags, Message-ID) of entries written before migration 0016.
import type { RelayServices } from '../services.js';
import {
  capturedForIndexing,
  entriesWithoutSearchTerms,
  insertInboxEntries,
  saveSearchTerms,
  unindexedMessages,
  type EntrySearchTerms,
  type InboxEntry,
  type NewInboxEntry,
} from '../storage/inbox.js';
import { offload } from '../threads/work.js';
import { searchTermsOf } from './search-terms.js';

const CATCH_UP_BATCH = 500;
/** Entries per backfill transaction (each reads up to 64 KiB of its raw message). */
const BACKFILL_BATCH = 200;

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
    return {
      seq: row.seq,
      id,
      ...summary,
      ...entryTerms(row.raw, row.tags_json),
      size: row.raw.length,
      email_id: row.email_id,
      project_id: row.project_id,
      received_at: row.received_at,
    };
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
