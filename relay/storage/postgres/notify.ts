// LISTEN/NOTIFY on one channel: how relays sharing a database wake each other (new jobs, webhook
// deliveries, a test-clock advance) and see each other's events (ravenctl listen, the dashboard).
// One dedicated connection listens; it reconnects by itself after the server or network drops it.
// Notifications are a wake-up, not the queue: workers still poll, so one lost in a reconnect only
// delays work, it never loses it.
import { EventEmitter } from 'node:events';
import pg from 'pg';

const CHANNEL = 'raven';
// NOTIFY payloads must stay under 8000 bytes.
export const MAX_NOTIFY_BYTES = 7_900;
const RECONNECT_MS = 500;

export class PostgresNotifier extends EventEmitter {
  private client: pg.Client | undefined;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private sending: Promise<boolean> = Promise.resolve(true);

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
      if (message.channel !== CHANNEL || message.payload === undefined) return;
      try {
        this.emit('message', JSON.parse(message.payload));
      } catch {
        // not one of ours
      }
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.client = client;
    this.emit('connected');
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

  /** Sends message to every relay listening, this one included; false if it could not be sent. */
  publish(message: unknown): Promise<boolean> {
    const payload = JSON.stringify(message);
    if (Buffer.byteLength(payload) > MAX_NOTIFY_BYTES) return Promise.resolve(false);
    // One statement at a time on the connection, in the order published.
    const sent = this.sending.then(async () => {
      if (!this.client) return false;
      await this.client.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]);
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
