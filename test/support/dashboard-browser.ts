import { createServer } from 'node:http';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page, type Request } from 'playwright-core';
import { expect } from 'vitest';
import { CHROMIUM_ARGS, ensureChromium } from './chromium.js';
import { REPO_ROOT, type ServerProcess, waitFor } from './server-process.js';

/**
 * What the browser tests of the dashboard share: Chromium, a network guard that keeps every
 * request on loopback, a page's dialogs and errors, and the few API calls that seed the server.
 */

/** Screenshots (git-ignored). */
export const ARTIFACTS = path.join(REPO_ROOT, 'test/artifacts');

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether a request stays on this machine: loopback, or no network at all (data:, blob:). */
export function staysLocal(url: string): boolean {
  const parsed = new URL(url);
  return parsed.protocol === 'data:' || parsed.protocol === 'blob:' || LOOPBACK.has(parsed.hostname);
}

/** Debian's Chromium (installed first if missing), headless, with the flags that keep it off the network. */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  const executablePath = ensureChromium();
  return chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs] });
}

export interface NetworkLog {
  /** Every request the context's pages made, in order. */
  requests: Request[];
  /** The URLs of those that would have left the machine (they were aborted). */
  foreign: string[];
}

/** Records every request of `context`; one to a host other than loopback is aborted and listed. */
export async function guardLoopback(context: BrowserContext): Promise<NetworkLog> {
  const log: NetworkLog = { requests: [], foreign: [] };
  context.on('request', (request) => log.requests.push(request));
  await context.route('**/*', (route) => {
    if (staysLocal(route.request().url())) return route.continue();
    log.foreign.push(route.request().url());
    return route.abort();
  });
  return log;
}

export interface PageWatch {
  dialogs: string[];
  pageErrors: string[];
}

/** A page's dialogs (alert, confirm, prompt: dismissed and listed) and uncaught errors. */
export function watchPage(page: Page): PageWatch {
  const watch: PageWatch = { dialogs: [], pageErrors: [] };
  page.on('pageerror', (err) => watch.pageErrors.push(String(err)));
  page.on('dialog', (dialog) => {
    watch.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return watch;
}

export interface NetworkTrap {
  /** Pass to Chromium: everything not on loopback goes to the trap instead of the network. */
  proxyArg: string;
  /** `METHOD url` of every request that reached the trap (it answers 403 or drops the tunnel). */
  hits: string[];
  close(): Promise<void>;
}

/**
 * A proxy on 127.0.0.1 that forwards nothing: with Chromium pointed at it, a request to another
 * host that no page handler sees (the browser's own, a preconnect, a worker) is still caught here.
 * Chromium never proxies loopback, so the server under test is reached directly.
 */
export async function startNetworkTrap(): Promise<NetworkTrap> {
  const hits: string[] = [];
  const trap = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(403).end();
  });
  trap.on('connect', (req, socket) => {
    hits.push(`CONNECT ${req.url}`);
    socket.destroy();
  });
  await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
  const address = trap.address();
  if (address === null || typeof address === 'string') throw new Error('the network trap has no TCP address');
  return {
    proxyArg: `--proxy-server=http://127.0.0.1:${address.port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        trap.closeAllConnections();
        trap.close(() => resolve());
      }),
  };
}

export interface WorkflowRef {
  id: string;
  traceId: string;
}

/** The calls a browser test seeds and checks the server with (dev tenant, no key). */
export function serverApi(server: ServerProcess) {
  async function post(url: string, body: unknown): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${server.url}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  }
  async function getJson<T>(url: string): Promise<T> {
    const res = await fetch(`${server.url}${url}`);
    expect(res.status, url).toBe(200);
    return (await res.json()) as T;
  }
  return {
    post,
    getJson,
    async submit(definition: unknown): Promise<WorkflowRef> {
      const res = await post('/v1/workflows', definition);
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      return res.body as WorkflowRef;
    },
    ended: (id: string, timeoutMs?: number) =>
      waitFor(
        `workflow ${id} to end`,
        async () => {
          const w = await getJson<{ status: string; [field: string]: unknown }>(`/v1/workflows/${id}`);
          return ['completed', 'failed', 'cancelled'].includes(w.status) && w;
        },
        timeoutMs,
      ),
  };
}
