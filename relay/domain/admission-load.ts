// Whether clients are kept waiting by a burst of admissions, so the delivery worker yields the
// cores to them (queue/worker.ts) and the queue absorbs the burst.
//
// A burst is BURST_WAITING admissions waiting for their commit at once (at a steady few hundred a
// second only a few wait at any moment), counted over every relay of one PostgreSQL database: each
// relay tells the others its count over the shared bus (at most every REPORT_EVERY_MS while
// admissions wait, and once more when none do), so three relays with sixteen clients each see the
// burst one relay with forty-eight sees; a relay with admissions waiting looks for it on each of
// those reports as well as when its own clients send (sight()). The burst's delivery allowance goes whole to one relay
// in it, the first by id: three relays in a burst deliver what one would, not three times as much
// (measured: with each relay at one relay's allowance, delivery kept pace with admission and took
// four fifths of the CPU, BENCHMARKS.md), and in the batches one relay would (split three ways,
// each relay claimed, read and recorded one or two jobs at a time, woken by every other relay's
// new jobs: a transaction flushed to disk per claim and per outcome). A relay whose own clients
// wait for nothing is not in a burst: its worker keeps full concurrency.
import { randomUUID } from 'node:crypto';
import type { RelayServices } from '../services.js';

const BURST_WAITING = 32;
// A burst lasts this long after it was last seen: the count drops to nothing at every commit,
// between one group and the next.
const BURST_HOLD_MS = 1_000;
// A burst saturates the relay once it has been seen for SATURATED_AFTER_MS with no gap longer than
// BURST_GAP_MS: its clients keep its admissions full (a closed loop sends again as soon as it is
// answered), so every CPU millisecond delivery takes is one they do not get. The hiccup of a
// steady load (a slow fsync, a pause: a few hundred milliseconds of waiting admissions, then a
// few again) is a burst, not saturation. The gap: between two sightings of a saturating burst lie
// a commit and the clients' next requests, 100 - 250 ms at most on this machine at load 20
// (BENCHMARKS.md, issue 24, session 11), a few milliseconds when it is quiet.
const BURST_GAP_MS = 500;
const SATURATED_AFTER_MS = 1_000;
/** A relay tells the others its count at most this often: the most that waited since it last did. */
const REPORT_EVERY_MS = 100;
/** Another relay's report counts for this long (a relay that died stops counting then). */
const REPORT_FRESH_MS = 2_000;

interface AdmissionLoad {
  /** This relay, in its reports. */
  readonly relay: string;
  waiting: number;
  /** The most admissions that waited here since the last report. */
  peak: number;
  /** performance.now() when a burst was last seen. */
  burstSeenAt: number;
  /** performance.now() when the burst last seen began: seen since then with no gap over BURST_GAP_MS. */
  burstSince: number;
  /** Whether this relay delivers the burst's allowance: the first, by id, of those with admissions waiting when it was last seen. */
  burstDelivers: boolean;
  reportedAt: number;
  reported: number;
  reportTimer: NodeJS.Timeout | undefined;
  /** The other relays' latest reports, at performance.now() of their arrival. */
  readonly peers: Map<string, { waiting: number; at: number }>;
}

const loads = new WeakMap<RelayServices, AdmissionLoad>();

function loadOf(services: RelayServices): AdmissionLoad {
  let load = loads.get(services);
  if (!load) {
    const made: AdmissionLoad = {
      relay: randomUUID(),
      waiting: 0,
      peak: 0,
      burstSeenAt: -Infinity,
      burstSince: -Infinity,
      burstDelivers: true,
      reportedAt: -Infinity,
      reported: 0,
      reportTimer: undefined,
      peers: new Map(),
    };
    services.bus.on('admission.load', (report) => {
      if (report.relay === made.relay) return;
      const now = performance.now();
      made.peers.set(report.relay, { waiting: report.waiting, at: now });
      // Seen on the others' reports too, not only when this relay's own clients send: its own
      // batch may keep them waiting longer than a burst lasts unseen (see sight()).
      if (made.waiting > 0) sight(made, now);
    });
    loads.set(services, (load = made));
  }
  return load;
}

/** Tells the other relays what waited here since the last report, now or once REPORT_EVERY_MS has passed since it. */
function changed(services: RelayServices, load: AdmissionLoad): void {
  load.peak = Math.max(load.peak, load.waiting);
  if (load.reportTimer !== undefined) return;
  const send = () => {
    load.reportTimer = undefined;
    if (load.peak === load.reported && load.peak === load.waiting) return;
    load.reportedAt = performance.now();
    load.reported = load.peak;
    load.peak = load.waiting;
    services.bus.emit('admission.load', { relay: load.relay, waiting: load.reported });
  };
  const wait = REPORT_EVERY_MS - (performance.now() - load.reportedAt);
  if (wait <= 0) send();
  else {
    load.reportTimer = setTimeout(send, wait);
    load.reportTimer.unref();
  }
}

/**
 * Looks for a burst at `now` while admissions of this relay wait: it is one when they and those
 * the other relays reported lately are BURST_WAITING or more. Looked for when an admission starts
 * here and when another relay's report arrives. Only the first made a relay whose batch kept its
 * clients waiting (a loaded machine, or the relay's own delivery at 32 in flight taking its CPU)
 * miss the burst it was in for as long as the batch lasted: it never saw it saturate (a gap of
 * 500 ms, BURST_GAP_MS, began it anew) and kept 32 dispatches in flight beside two relays waiting on
 * a core (BENCHMARKS.md, issue 24, session 12).
 */
function sight(load: AdmissionLoad, now: number): void {
  let waiting = load.waiting;
  let first = true;
  for (const [relay, peer] of load.peers) {
    if (now - peer.at > REPORT_FRESH_MS) load.peers.delete(relay);
    else if (peer.waiting > 0) {
      waiting += peer.waiting;
      if (relay < load.relay) first = false;
    }
  }
  if (waiting >= BURST_WAITING) {
    load.burstSince = burstBegan(load.burstSince, load.burstSeenAt, now);
    load.burstSeenAt = now;
    load.burstDelivers = first;
  }
}

/** An admission starts waiting for its commit; the returned function ends the wait. */
export function admissionWaiting(services: RelayServices): () => void {
  const load = loadOf(services);
  load.waiting++;
  sight(load, performance.now());
  changed(services, load);
  return () => {
    load.waiting--;
    changed(services, load);
  };
}

/** When the burst seen at `now` began, given when the one seen before began (`since`) and was last seen (`seenAt`). */
export function burstBegan(since: number, seenAt: number, now: number): number {
  return now - seenAt > BURST_GAP_MS ? now : since;
}

/** Whether a burst that began at `since` and was last seen at `seenAt` saturates the relay at `now`. */
export function burstSaturates(since: number, seenAt: number, now: number): boolean {
  return now - seenAt <= BURST_GAP_MS && seenAt - since >= SATURATED_AFTER_MS;
}

/**
 * During a burst of admissions, this relay's share of the delivery allowance `allowance` (given
 * whether the burst saturates the relay): all of it for the first relay in the burst, nothing for
 * the others; undefined when there is none.
 */
export function burstAllowance(services: RelayServices, allowance: (saturated: boolean) => number): number | undefined {
  // The worker asks from its start: from then on this relay hears the others' reports.
  const load = loadOf(services);
  const now = performance.now();
  if (now - load.burstSeenAt >= BURST_HOLD_MS) return undefined;
  return load.burstDelivers ? allowance(burstSaturates(load.burstSince, load.burstSeenAt, now)) : 0;
}
