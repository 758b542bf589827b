// Simulated outcomes: the sink answers a recipient as its local part says (`bounced@`,
// `rejected+x@`, `delayed@`, `unknown@`, `complained@`); every other address is delivered. The
// sink applies them; the admin API shows each captured message's.
import type { CapturedMessage } from 'raven-email-sdk';

/** The outcomes a captured message lists (openapi.yaml's SimulatedOutcome), or delivered for any other address. */
export type SimulatedOutcome = CapturedMessage['simulated_outcomes'][number]['outcome'] | 'delivered';

const SIMULATED = new Set<SimulatedOutcome>(['bounced', 'rejected', 'delayed', 'unknown', 'complained']);

/** The simulated outcome for an address: its local part before an optional +label. */
export function simulatedOutcome(address: string): SimulatedOutcome {
  const at = address.lastIndexOf('@');
  const plus = address.indexOf('+');
  // The local part up to its first '+' (before the last '@').
  const end = plus >= 0 && (at < 0 || plus < at) ? plus : at >= 0 ? at : address.length;
  const local = address.slice(0, end).toLowerCase();
  return SIMULATED.has(local as SimulatedOutcome) ? (local as SimulatedOutcome) : 'delivered';
}
