import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { closeListener } from '../../../src/api/http/listener-close.js';
import type { Deps } from '../../../src/deps.js';
import { send } from '../../support/http-client.js';

/**
 * Closing the listener during a shutdown (docs/design.md#execution) must not reset a connection the kernel has
 * already accepted for it: closing a listening socket resets every connection still in its
 * accept queue. The event loop of a busy server can be blocked for longer than the quiet period
 * the close waits for (here: on purpose, right after the clients connected), and a quiet period
 * measured while nobody looked at the accept queue proves nothing.
 */

function busyWait(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // A server busy with synchronous work: no timer, no I/O.
  }
}

describe('closeListener', () => {
  it('answers the connections waiting in the accept queue though the loop was blocked when they came', async () => {
    const lifecycle: Deps['lifecycle'] = { shuttingDown: true };
    // What app.ts does while draining: hold the request until the listener is closed, then 503.
    const server = createServer(async (_request, response) => {
      if (lifecycle.held) await lifecycle.held;
      response.writeHead(503, { connection: 'close' }).end('draining');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);

    const closed = closeListener(server, lifecycle);
    const answers = Array.from({ length: 5 }, () => send(undefined, base, '/'));
    // The connects are issued on the next tick; once they are, the loop blocks past the quiet period.
    await new Promise<void>((resolve) => process.nextTick(resolve));
    busyWait(200);
    await closed;

    const outcomes = await Promise.all(answers);
    expect(outcomes.map((o) => o.error ?? o.status)).toEqual([503, 503, 503, 503, 503]);
    // And the listener is closed: a later client is refused.
    const late = await send(undefined, base, '/');
    expect(late.error).toMatch(/^ECONNREFUSED/);
    server.closeAllConnections();
  });
});
