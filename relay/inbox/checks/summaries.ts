// The summary badge of each captured message's checks (issue 26), lazily: a list that shows
// messages without a badge queues them, and one message at a time, in the background, their checks
// run (all but links: the badge's rules in verdict.ts) and the verdict is cached
// (storage/check-summaries.ts) and announced ('inbox.checked' on the bus) to the open dashboards.
// The sink never waits for any of it, and the badges yield to it: each waits for a quiet sink
// (CaptureActivity), or BUSY_PACE_MS at most while mail never stops coming, so a dashboard open on
// a busy inbox takes one check per BUSY_PACE_MS from the sink's CPU. Running the checks of a
// message (GET /admin/v1/messages/{id}/checks) stores its fresh verdict too.
import type { CheckSummary } from 'raven-email-sdk';
import type { CheckSummaries, RelayServices } from '../../services.js';
import { checkSummariesOf, saveCheckSummaries, type CheckSummaryRow } from '../../storage/check-summaries.js';
import { checkCapturedMessage } from './message-checks.js';
import { VERDICT_RULES } from './verdict.js';

/** Messages waiting for a badge; past this, a list's further ones are queued by a later list. */
const MAX_WAITING = 1_000;
/** While the sink is busy, one badge per this many milliseconds (a check takes a few tens). */
const BUSY_PACE_MS = 1_000;

const view = (row: CheckSummaryRow): CheckSummary => ({ verdict: row.verdict, reasons: row.reasons, checked_at: row.checked_at });

export interface CheckSummariesOptions {
  /** While the sink is busy, one badge per this many milliseconds (default BUSY_PACE_MS). */
  busyPaceMs?: number;
}

/** `relay` is read when the first badge is computed: the services object holds this one too. */
export function startCheckSummaries(relay: () => RelayServices, options: CheckSummariesOptions = {}): CheckSummaries {
  const busyPaceMs = options.busyPaceMs ?? BUSY_PACE_MS;
  const services = () => relay();
  const waiting = new Set<string>();
  let running: Promise<void> | undefined;
  let current: string | undefined;
  let stopped = false;
  const stopping = new AbortController();

  async function save(rows: CheckSummaryRow[]): Promise<void> {
    const kept = new Set(await services().db.write((tx) => saveCheckSummaries(tx, rows, VERDICT_RULES)));
    const saved = rows.filter((r) => kept.has(r.message_id)).map((r) => ({ id: r.message_id, checks: view(r) }));
    if (saved.length > 0) services().bus.emit('inbox.checked', saved);
  }

  async function summarize(id: string): Promise<CheckSummaryRow | undefined> {
    const checks = await checkCapturedMessage(services(), id, { links: false });
    if (!checks) return undefined; // deleted meanwhile
    return { message_id: id, ...checks.summary, checked_at: services().clock.iso() };
  }

  async function work(): Promise<void> {
    while (waiting.size > 0 && !stopped) {
      // Captures first: a client waits for each 250, a badge can wait.
      await services().captureActivity.whenQuiet(busyPaceMs, stopping.signal);
      if (stopped) return;
      const id = waiting.values().next().value as string;
      waiting.delete(id);
      current = id;
      try {
        const row = await summarize(id);
        if (row) await save([row]);
      } catch (error) {
        services().log.warn('inbox', 'cannot compute the checks badge', { message_id: id, error: (error as Error).message });
      } finally {
        current = undefined;
      }
      // Between two messages the relay's own work (capture, the API) goes first.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  function schedule(): void {
    running ??= work().finally(() => {
      running = undefined;
      if (waiting.size > 0 && !stopped) schedule();
    });
  }

  return {
    async attach(entries) {
      const cached = await checkSummariesOf(services().db, entries.map((e) => e.id), VERDICT_RULES);
      for (const e of entries) if (!cached.has(e.id) && e.id !== current && waiting.size < MAX_WAITING && !stopped) waiting.add(e.id);
      if (waiting.size > 0 && !stopped) schedule();
      return entries.map((e) => {
        const row = cached.get(e.id);
        return { ...e, checks: row ? view(row) : null };
      });
    },
    async store(id, verdict) {
      const row = { message_id: id, ...verdict, checked_at: services().clock.iso() };
      await save([row]);
      return view(row);
    },
    async idle() {
      while (running) await running;
    },
    async stop() {
      stopped = true;
      stopping.abort();
      waiting.clear();
      while (running) await running;
    },
  };
}
