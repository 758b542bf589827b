// LISTEN/NOTIFY on one channel: how relays sharing a database wake each other (new jobs, webhook
// deliveries, a test-clock advance) and see each other's events (ravenctl listen, the dashboard).
// One dedicated connection listens; it reconnects by itself after the server or network drops it.
// Notifications are a wake-up, not the queue: workers still poll, so one lost in a reconnect only
// delays work, it never loses it.
//
// A list of messages past NOTIFY's 8,000-byte limit goes as several notifications. A message past
// it by itself (an event whose webhook body carries twenty long tags, a batch of inbox entries)
// is carried whole all the same: it is stored as a row of bus_payloads
// (migration 0022) and the notification, sent in the same statement, names the row; each
// receiving relay reads it before it hands the message on. Rows older than a minute are deleted by
// the next oversized publish.
import { EventEmitter } from 'node:events';
import pg from 'pg';

const CHANNEL = 'raven';
// NOTIFY payloads must stay under 8000 bytes.
export const MAX_NOTIFY_BYTES = 7_900;
const RECONNECT_MS = 500;
/** A notification naming a stored payload: this prefix, then the row's id (JSON never starts so). */
const STORED = '@';

// Stores the payload, deletes the rows every relay has long read (skipping any another relay is
// deleting), and notifies with the new row's id, all in one statement: the notification goes out
// at its commit, when the row is there to read.
const PUBLISH_STORED = `
  WITH expired AS (
    DELETE FROM bus_payloads WHERE id IN (
      SELECT id FROM bus_payloads WHERE created_at < clock_timestamp() - interval '60 seconds' FOR UPDATE SKIP LOCKED)
  ), stored AS (
    INSERT INTO bus_payloads (payload) VALUES ($2) RETURNING id
  )
  SELECT pg_notify($1, '${STORED}' || id) FROM stored`;

export class PostgresNotifier extends EventEmitter {
  private client: pg.Client | undefined;
  /** The listening connection's server process: the notifications it sent itself are not news. */
  private ownPid = 0;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private sending: Promise<boolean> = Promise.resolve(true);
  /** Notifications are handed on one at a time, in the order they arrived, stored ones included. */
  private receiving: Promise<void> = Promise.resolve();

  constructor(
    private readonly url: string,
    private readonly types: pg.CustomTypesConfig,
    private readonly onError?: (error: Error) => void,
  ) {
    super();
    this.setMaxListeners(0);
  }

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, types: this.types, connectionTimeoutMillis: 5_000 });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (message.channel !== CHANNEL || message.payload === undefined || message.processId === this.ownPid) return;
      this.receive(client, message.payload);
    });
    await client.connect();
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    this.ownPid = rows[0]!.pid;
    // A notification is a transaction of its own, and PostgreSQL holds its one notification-queue
    // lock until that commit is flushed to disk: every relay's notifications would wait a flush in
    // turn. A wake-up needs no durability (a crash of the server ends every listening connection
    // anyway), so its commit does not wait for the disk.
    await client.query('SET synchronous_commit = off');
    await client.query(`LISTEN ${CHANNEL}`);
    this.client = client;
    this.emit('connected');
  }

  private receive(client: pg.Client, payload: string): void {
    this.receiving = this.receiving.then(async () => {
      let text: string | undefined = payload;
      if (payload.startsWith(STORED)) {
        // Read on the connection it arrived on; if that is gone, or the row too, the message is
        // lost as a notification sent during a reconnect would be.
        const { rows } = await client.query<{ payload: string }>('SELECT payload FROM bus_payloads WHERE id = $1', [payload.slice(STORED.length)]);
        text = rows[0]?.payload;
      }
      if (text !== undefined) this.emit('message', JSON.parse(text));
    }).catch(() => undefined); // not one of ours, or its row could not be read
  }

  private lost(client: pg.Client, error?: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    if (error) this.onError?.(error);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.stopped) return;
      this.start().catch(() => this.scheduleReconnect());
    }, RECONNECT_MS);
    this.reconnectTimer.unref();
  }

  /**
   * Sends message to every other relay listening, whatever its size; false if it could not be sent.
   * A list too long for one notification goes as several lists, in order, each as long as fits
   * (a notification is cheaper than a stored payload, which costs a row written and read by every
   * relay); only an item too long by itself is stored.
   */
  publish(message: unknown): Promise<boolean> {
    const payload = JSON.stringify(message);
    if (Buffer.byteLength(payload) <= MAX_NOTIFY_BYTES || !Array.isArray(message) || message.length < 2) return this.send(payload);
    const sent: Array<Promise<boolean>> = [];
    let chunk: string[] = [];
    let bytes = 2; // the brackets
    for (const item of message) {
      const text = JSON.stringify(item);
      const size = Buffer.byteLength(text) + 1; // and its comma
      if (chunk.length > 0 && bytes + size > MAX_NOTIFY_BYTES) {
        sent.push(this.send(`[${chunk.join(',')}]`));
        chunk = [];
        bytes = 2;
      }
      chunk.push(text);
      bytes += size;
    }
    sent.push(this.send(`[${chunk.join(',')}]`));
    return Promise.all(sent).then((all) => all.every(Boolean));
  }

  private send(payload: string): Promise<boolean> {
    const statement = Buffer.byteLength(payload) > MAX_NOTIFY_BYTES ? PUBLISH_STORED : 'SELECT pg_notify($1, $2)';
    // One statement at a time on the connection, in the order published.
    const sent = this.sending.then(async () => {
      if (!this.client) return false;
      await this.client.query(statement, [CHANNEL, payload]);
      return true;
    });
    this.sending = sent.catch(() => false);
    return this.sending;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
