import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ARTIFACTS,
  guardLoopback,
  launchChromium,
  type NetworkLog,
  type PageWatch,
  serverApi,
  watchPage,
} from '../support/dashboard-browser.js';
import { type ServerProcess, startServer, stopAllServers, tempDir, waitFor } from '../support/server-process.js';

/**
 * The web dashboard in a real browser (Debian chromium driven by playwright-core) against the real
 * server: summary figures and a drawn chart, a workflow's waterfall (one bar per span), a running
 * workflow's events arriving over SSE and its cancellation from the page, model output shown as
 * text. Every request to a host other than the server's is aborted and fails the test.
 */

const XSS = '<script>alert(1)</script> done';

let server: ServerProcess;
let api: ReturnType<typeof serverApi>;
let browser: Browser;
let page: Page;
let network: NetworkLog;
let watch: PageWatch;
const tmp = tempDir('baton-browser-');

const submit = (definition: unknown) => api.submit(definition);
const getJson = <T>(url: string) => api.getJson<T>(url);
const ended = (id: string) => api.ended(id);

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  // First, so a fresh machine's one-time `apt-get install chromium` (minutes) is not raced by the server.
  browser = await launchChromium();
  server = await startServer({ dbPath: tmp.dbPath() });
  api = serverApi(server);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  network = await guardLoopback(context);
  page = await context.newPage();
  watch = watchPage(page);
}, 1_200_000);

afterAll(async () => {
  await browser?.close();
  await stopAllServers();
  tmp.cleanup();
});

describe('web dashboard (browser)', () => {
  it('shows the summary, a waterfall with one bar per span, live events, cancel, and inert model text', async () => {
    const xss = await submit({
      name: 'inert-text',
      agents: { a: { model: 'sim/haiku', simulate: { responses: [{ text: XSS }] } } },
      root: { type: 'prompt', name: 'say', agent: 'a', user: 'say something' },
    });
    await ended(xss.id);

    // The summary: figures from GET /v1/dashboard and uPlot canvases with a size.
    await page.goto(`${server.url}/`);
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    await page.locator('[data-figure="Tasks completed"]').waitFor();
    expect(await page.locator('[data-figure="Tasks completed"]').textContent()).toBe('1');
    expect(await page.locator('[data-figure="Success rate"]').textContent()).toBe('100.0%');
    // Selection's savings beside the cache's (no selection ran yet: nothing saved).
    expect(await page.locator('[data-figure="Saved by cache"]').textContent()).toBe('$0.000000');
    expect(await page.locator('[data-figure="Saved by selection"]').textContent()).toBe('$0.000000');
    const canvas = page.locator('[data-chart="Success rate and efficiency per day"] canvas').first();
    await canvas.waitFor();
    // No DOM lib in tsconfig: the canvas is typed by the two fields read.
    const size = await canvas.evaluate((c) => {
      const drawn = c as unknown as { width: number; height: number };
      return { w: drawn.width, h: drawn.height };
    });
    expect(size.w).toBeGreaterThan(0);
    expect(size.h).toBeGreaterThan(0);
    expect(await page.locator('.uplot').count()).toBe(4);
    expect(await page.locator('a[href="/docs"]').count()).toBe(1);
    await page.screenshot({ path: path.join(ARTIFACTS, 'summary.png'), fullPage: true });

    // The workflow list, then the finished workflow: its output as text, one bar per span.
    await page.click('a[href="#/workflows"]');
    await page.locator(`a[href="#/workflows/${xss.id}"]`).click();
    const trace = await getJson<{ spans: unknown[] }>(`/v1/traces/${xss.traceId}`);
    await page.locator('.waterfall').waitFor();
    expect(trace.spans.length).toBeGreaterThan(2);
    await waitFor(
      'the waterfall',
      async () => (await page.locator('.waterfall .span-bar').count()) === trace.spans.length,
    );
    expect(await page.locator('.waterfall .span-bar').count()).toBe(trace.spans.length);
    expect(await page.locator('#output').textContent()).toBe(XSS);
    expect(await page.locator('#output script').count()).toBe(0);
    // A generation's input and output on click, as text too.
    await page.locator('.wf-row[data-span-type="generation_span"]').first().click();
    await page.locator('.gen-output').waitFor();
    expect(await page.locator('.gen-output').textContent()).toBe(XSS);
    expect(await page.locator('.gen-input').textContent()).toBe('say something');
    expect(await page.locator('main script').count()).toBe(0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'workflow.png'), fullPage: true });

    // A running workflow: events arrive over SSE while it runs; cancel it from the page.
    const slow = await submit({
      name: 'slow-steps',
      agents: { slow: { model: 'sim/haiku', simulate: { latencyMs: 400 } } },
      root: {
        type: 'sequence',
        name: 'main',
        steps: [1, 2, 3, 4, 5, 6, 7, 8].map((i) => ({
          type: 'prompt',
          name: `step-${i}`,
          agent: 'slow',
          user: `step ${i}`,
        })),
      },
    });
    await page.goto(`${server.url}/dashboard#/workflows/${slow.id}`);
    await page.locator('#events .event').first().waitFor();
    const before = await page.locator('#events .event').count();
    await waitFor(
      'more events to arrive',
      async () => (await page.locator('#events .event').count()) > before + 1,
      5_000,
    );
    expect(await page.locator('#events .event[data-type="workflowEnd"]').count()).toBe(0);
    expect(await page.locator('#cancel').isEnabled()).toBe(true);
    await page.click('#cancel');
    await page.locator('#events .event[data-type="workflowEnd"]').waitFor({ timeout: 10_000 });
    await page.locator('h1 [data-status="cancelled"]').waitFor({ timeout: 10_000 });
    expect((await ended(slow.id)).status).toBe('cancelled');
    expect(await page.locator('#cancel').isDisabled()).toBe(true);
    await page.screenshot({ path: path.join(ARTIFACTS, 'cancelled.png'), fullPage: true });

    // A critical workflow waits at its human checkpoint: approve it from the page and it runs.
    const critical = await submit({
      name: 'critical-change',
      task: { type: 'migration', complexity: 'critical' },
      agents: { dev: { model: 'sim/haiku' } },
      root: { type: 'prompt', name: 'plan', agent: 'dev', user: 'Plan it.' },
    });
    await waitFor('the checkpoint', async () => {
      const w = await getJson<{ checkpoint: { state: string } | null }>(`/v1/workflows/${critical.id}`);
      return w.checkpoint?.state === 'pending';
    });
    await page.goto(`${server.url}/dashboard#/workflows/${critical.id}`);
    await page.locator('#checkpoint').waitFor({ timeout: 10_000 });
    await page.click('#approve');
    expect((await ended(critical.id)).status).toBe('completed');

    // The analytics tables.
    await page.click('a[href="#/analytics"]');
    await page.locator('h1', { hasText: 'Analytics' }).waitFor();
    expect(await page.locator('table').first().textContent()).toContain('sim/haiku');
    await page.locator('h2', { hasText: 'Agent selection strategies' }).waitFor();
    const strategies = page.locator('h2:has-text("Agent selection strategies") + table');
    expect(await strategies.textContent()).toContain('thompson');
    expect(await strategies.textContent()).toContain('cost_aware');
    await page.locator('h2', { hasText: 'Saved by selection, per task type' }).waitFor();

    expect(network.foreign).toEqual([]);
    expect(watch.pageErrors).toEqual([]);
    expect(watch.dialogs).toEqual([]);
  });

  it('with API_KEYS set, asks for a key on a 401 and sends it as a bearer token', async () => {
    const KEY = 'browser-test-key-0123456789';
    const keyed = await startServer({ dbPath: tmp.dbPath('keyed.db'), env: { API_KEYS: `acme:${KEY}` } });
    const context = await browser.newContext();
    const keyedNetwork = await guardLoopback(context);
    const keyedPage = await context.newPage();
    await keyedPage.goto(`${keyed.url}/dashboard`);
    await keyedPage.locator('#key-form').waitFor({ state: 'visible' });
    expect(await keyedPage.locator('main .error').textContent()).toContain('Unauthorized');
    await keyedPage.fill('#key-input', KEY);
    await keyedPage.click('#key-form button[type="submit"]');
    await keyedPage.locator('[data-figure="Tasks completed"]').waitFor();
    expect(await keyedPage.locator('[data-figure="Tasks completed"]').textContent()).toBe('0');
    expect(await keyedPage.locator('#key-form').isHidden()).toBe(true);
    const authorizations = keyedNetwork.requests
      .filter((request) => new URL(request.url()).pathname.startsWith('/v1/'))
      .map((request) => request.headers().authorization);
    expect(authorizations[0]).toBeUndefined();
    expect(authorizations.at(-1)).toBe(`Bearer ${KEY}`);
    await context.close();
    expect(keyedNetwork.foreign).toEqual([]);
  });
});
