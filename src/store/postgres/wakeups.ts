import pg from 'pg';
import { prepared } from './prepared.js';

/**
 * Wake-ups between instances over LISTEN/NOTIFY: one dedicated connection per instance listens on
 * the channels subscribed to, and reconnects (listening again) when the connection drops, so a
 * restarted PostgreSQL or a killed backend costs a late wake-up, never a lost subscription. A
 * notification is only a hint to look (payloads are bounded by PostgreSQL at 8000 bytes and lost
 * while disconnected): whatever it announces is read from the tables, and `onReconnect` tells the
 * caller to re-read what it may have missed.
 */
export interface Wakeups {
  /** Calls `handler(payload)` for each notification on `channel`; returns the unsubscribe. */
  subscribe(channel: string, handler: (payload: string) => void): Promise<() => void>;
  /** Notifies every instance listening on `channel` (this one included). */
  notify(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

export interface WakeupOptions {
  connectionString: string;
  /** Called after the listening connection came back (its notifications while down are lost). */
  onReconnect?(): void;
  /** Between reconnection attempts; default 250 ms. */
  retryMs?: number;
}

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

export function createWakeups(pool: pg.Pool, options: WakeupOptions): Wakeups {
  const handlers = new Map<string, Set<(payload: string) => void>>();
  let listener: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  let closed = false;
  const retryMs = options.retryMs ?? 250;

  const connect = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: options.connectionString });
    client.on('notification', (message) => {
      for (const handler of handlers.get(message.channel) ?? []) handler(message.payload ?? '');
    });
    client.on('error', () => reconnectSoon(client));
    client.on('end', () => reconnectSoon(client));
    await client.connect();
    for (const channel of handlers.keys()) await client.query(`LISTEN ${channel}`);
    return client;
  };

  const listening = (): Promise<pg.Client> => {
    if (listener) return Promise.resolve(listener);
    connecting ??= connect().then(
      (client) => {
        listener = client;
        connecting = undefined;
        return client;
      },
      (error: unknown) => {
        connecting = undefined;
        throw error;
      },
    );
    return connecting;
  };

  const reconnectSoon = (dead: pg.Client) => {
    if (listener !== dead || closed) return;
    listener = undefined;
    dead.end().catch(() => {});
    const attempt = () => {
      if (closed) return;
      listening().then(
        () => options.onReconnect?.(),
        () => setTimeout(attempt, retryMs).unref(),
      );
    };
    setTimeout(attempt, 0).unref();
  };

  return {
    async subscribe(channel, handler) {
      if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
      const client = await listening();
      let set = handlers.get(channel);
      if (!set) {
        set = new Set();
        handlers.set(channel, set);
        await client.query(`LISTEN ${channel}`);
      }
      set.add(handler);
      return () => {
        set.delete(handler);
      };
    },
    async notify(channel, payload) {
      if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
      await pool.query(prepared('SELECT pg_notify($1, $2)', [channel, payload]));
    },
    async close() {
      closed = true;
      const client = listener ?? (await connecting?.catch(() => undefined));
      listener = undefined;
      await client?.end().catch(() => {});
    },
  };
}
