// DKIM key pairs for the test relays (StartOptions.dkimKeyPairs). Every test relay's bootstrap
// connects a domain, and an RSA pair costs 0.15-0.25 CPU s to make: `npm test` makes a pool once
// (makeDkimKeyPool, in test/run.ts) and names it in RAVEN_TEST_DKIM_KEYS; each test process takes
// the pool's pairs in turn from a random place, so the domains of one test file get distinct pairs
// (as many as the pool holds). A file run without the runner gets a fresh pair each time, as a
// relay makes them.
import { generateKeyPair } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { DKIM_KEY_BITS, dkimKeyPairOf, newDkimKeyPair, type DkimKeyPair } from '../../relay/domain/dkim-key-pair.js';

const POOL_SIZE = 48;

/** Makes the pool (on libuv's threads, beside the run's other preparations) into `file`. */
export async function makeDkimKeyPool(file: string): Promise<void> {
  const pairs = await Promise.all(
    Array.from({ length: POOL_SIZE }, async () => dkimKeyPairOf(await promisify(generateKeyPair)('rsa', { modulusLength: DKIM_KEY_BITS }))),
  );
  writeFileSync(file, JSON.stringify(pairs));
}

const poolFile = process.env.RAVEN_TEST_DKIM_KEYS;
const pool: DkimKeyPair[] = poolFile ? (JSON.parse(readFileSync(poolFile, 'utf8')) as DkimKeyPair[]) : [];
let next = Math.floor(Math.random() * pool.length);

/** The next pair of the run's pool, or a fresh one when there is no pool. */
export function testDkimKeyPair(): DkimKeyPair {
  if (pool.length === 0) return newDkimKeyPair();
  return pool[next++ % pool.length]!;
}
