import type { Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { Deps } from '../../deps.js';

/** Requests are held until no connection has arrived for QUIET_MS (at most MAX_HOLD_MS) before
 * the listener closes; open connections may then make their last request for LINGER_MS. */
const QUIET_MS = 50;
const MAX_HOLD_MS = 500;
const LINGER_MS = 1_000;
/** What closing the listener takes at most when it has the time: main.ts keeps it out of the calls' grace. */
export const LISTENER_CLOSE_MS = MAX_HOLD_MS + LINGER_MS;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** Resolves in the check phase, just after a poll phase: every connection waiting in the kernel was accepted in it. */
const afterPoll = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Closes the listener without resetting anyone (docs/design.md#execution). While draining, every answer closes
 * its connection, so busy clients keep opening new ones, and closing the listener would reset
 * those still in the kernel's accept queue: ECONNRESET for a request the service never saw. So
 * requests are first held (a client waiting for an answer opens no connection) until connections
 * stop arriving, then the listener closes with net.Server#close (http.Server#close would also
 * destroy idle keep-alive sockets at once, racing a client writing on one), the held requests get
 * their 503 with `connection: close`, and clients that reconnect are refused. Whatever is still
 * open after LINGER_MS (clients gone quiet, event streams) is app.close()'s.
 */
export async function closeListener(
  server: Server,
  lifecycle: Deps['lifecycle'],
  /** The time left before the process must be gone: the hold and the linger shrink to fit it. */
  budgetMs: number = LISTENER_CLOSE_MS,
): Promise<void> {
  const holdMs = Math.min(MAX_HOLD_MS, Math.max(0, budgetMs) / 3);
  let release = () => {};
  lifecycle.held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const heldAt = Date.now();
  let lastConnectionAt = heldAt;
  const onConnection = () => {
    lastConnectionAt = Date.now();
  };
  server.on('connection', onConnection);
  // Quiet is judged only just after a poll phase: a loop blocked for longer than QUIET_MS (the
  // drain's last commits, a busy server) has not looked at the accept queue, and the connections
  // waiting there would be reset by the close.
  do {
    await sleep(10);
    await afterPoll();
  } while (Date.now() - lastConnectionAt < QUIET_MS && Date.now() - heldAt < holdMs);
  server.off('connection', onConnection);
  const drained = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  lifecycle.held = undefined;
  release();
  const lingerMs = Math.min(LINGER_MS, Math.max(0, budgetMs - (Date.now() - heldAt)));
  await Promise.race([drained, sleep(lingerMs)]);
}
