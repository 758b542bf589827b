// When each API key last authenticated a request: the "last used" of the dashboard's key list.
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { Db } from '../storage/db.js';
import { recordKeyUse } from '../storage/keys.js';

/** A key's use is written at most once a minute per relay, so a busy key adds no write per request. */
const RECORD_EVERY_MS = 60_000;
/** Bounds the memory of when each key was last written; forgetting only costs one early write. */
const REMEMBERED_KEYS = 10_000;

export class KeyUse {
  private readonly writtenAt = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** Records a use without delaying the request: the write joins the next group commit. */
  note(keyId: string): void {
    const now = this.clock.nowMs();
    const last = this.writtenAt.get(keyId);
    // now < last: the test clock went back a relay restart ago; write again rather than stay stale.
    if (last !== undefined && now >= last && now - last < RECORD_EVERY_MS) return;
    if (this.writtenAt.size >= REMEMBERED_KEYS) this.writtenAt.clear();
    this.writtenAt.set(keyId, now);
    const at = new Date(now).toISOString();
    this.db.write((tx) => recordKeyUse(tx, keyId, at)).catch((error: unknown) => {
      // The request it came from has its answer already; a later use writes it again.
      this.writtenAt.delete(keyId);
      this.log.warn('db', 'could not record an API key use', { key_id: keyId, error: String(error) });
    });
  }
}
