// Pending domains are rechecked over DNS every dns.recheckIntervalSeconds until they verify, by
// the same code as POST /admin/v1/domains/{id}/verify (verifyDomain), so the per-record statuses,
// last_checked_at and verified_at are written the same way. "Due" is measured on the relay clock
// from last_checked_at (advancing the test clock makes domains due); the sleeps are real time.
import type { DnsRecord } from 'raven-email-sdk';
import type { RelayServices } from '../services.js';
import { pendingDomainsCheckedBefore, pendingDomainsSummary } from '../storage/domains.js';
import { createDnsChecker, type DnsChecker } from './dns-check.js';
import { verifyDomain } from './sending-domains.js';

/** Domains checked at once: a few DNS queries each, against one resolver. */
const CONCURRENCY = 4;
/** Domains read per query; a full batch is followed by the next one at once. */
const BATCH = 100;
/** Shortest sleep between passes, so a domain whose check keeps failing cannot spin the loop. */
const MIN_SLEEP_MS = 1_000;

export interface DomainRecheck {
  stop(): Promise<void>;
}

class Stopping extends Error {}

async function eachLimited<T>(items: T[], limit: number, stopped: () => boolean, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (!stopped() && next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

export function startDomainRecheck(s: RelayServices, checker: DnsChecker = createDnsChecker(s.config.dns.servers)): DomainRecheck {
  const { db, clock, log } = s;
  const intervalMs = s.config.dns.recheckIntervalSeconds * 1000;
  if (intervalMs <= 0) return { stop: async () => {} };

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  // A check cut short by stop() must not be written as "failed": throwing skips verifyDomain's write.
  const checkRecords = async (records: DnsRecord[]) => {
    const checked = await checker(records);
    if (stopped) throw new Stopping();
    return checked;
  };

  async function dueDomains(): Promise<string[]> {
    const cutoff = new Date(clock.nowMs() - intervalMs).toISOString();
    return pendingDomainsCheckedBefore(db, cutoff, BATCH);
  }

  async function recheck(id: string): Promise<void> {
    try {
      const domain = await verifyDomain(s, id, {}, checkRecords);
      if (domain.status === 'verified') log.info('dns', 'domain verified by the periodic DNS check', { domain_id: id, domain: domain.name });
    } catch (error) {
      if (!(error instanceof Stopping)) log.warn('dns', 'periodic DNS check failed', { domain_id: id, error: (error as Error).message });
    }
  }

  /** Real time until the oldest pending check is due again, within [MIN_SLEEP_MS, interval]. */
  async function untilNextDue(): Promise<number> {
    const row = await pendingDomainsSummary(db);
    if (!row || row.pending === 0) return intervalMs;
    const dueAt = row.oldest ? Date.parse(row.oldest) + intervalMs : 0;
    return Math.min(intervalMs, Math.max(Math.min(MIN_SLEEP_MS, intervalMs), dueAt - clock.nowMs()));
  }

  async function pass(): Promise<void> {
    for (;;) {
      const ids = await dueDomains();
      await eachLimited(ids, CONCURRENCY, () => stopped, recheck);
      if (ids.length < BATCH || stopped) return;
    }
  }

  function run(): void {
    if (running || stopped) return;
    clearTimeout(timer);
    running = (async () => {
      let sleepMs = intervalMs;
      try {
        await pass();
        sleepMs = await untilNextDue();
      } catch (error) {
        if (!stopped) log.error('dns', 'periodic DNS check pass failed', { error: (error as Error).message });
      }
      running = undefined;
      if (stopped) return;
      timer = setTimeout(run, sleepMs);
      timer.unref();
    })();
  }

  clock.on('advanced', run);
  run();

  return {
    async stop() {
      stopped = true;
      clock.off('advanced', run);
      clearTimeout(timer);
      checker.cancel();
      await running;
    },
  };
}
