import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardLoopback, launchChromium, serverApi } from '../support/dashboard-browser.js';
import { type ServerProcess, startServer, stopAllServers, tempDir, waitFor } from '../support/server-process.js';

/**
 * The browser-side holes of the keyless dev mode and of the shared origin, in a real Chromium
 * against the real server: a page of another site may not frame /docs, may not write to the API
 * (a no-cors POST needs no preflight), and may not read it by DNS rebinding (a host name of its own
 * resolved to 127.0.0.1); /docs runs under its CSP without a violation; the dashboard keeps the API
 * key in the tab unless asked to remember it.
 */
const REBOUND = 'rebind.attacker.test';
const KEY = 'browser-key-0123456789abcdef';

let dev: ServerProcess;
let keyed: ServerProcess;
let browser: Browser;
let attacker: Server;
let attackerUrl: string;
/** What the attacker's page does, set per test. */
let attackerPage = '';
const tmp = tempDir('baton-origin-');

beforeAll(async () => {
  // The resolver rule plays the attacker's DNS: its name now points at this machine.
  browser = await launchChromium([`--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`]);
  dev = await startServer({ dbPath: tmp.dbPath('dev.db') });
  keyed = await startServer({ dbPath: tmp.dbPath('keyed.db'), env: { API_KEYS: `acme:${KEY}` } });
  attacker = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(attackerPage);
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
}, 1_200_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => attacker?.close(resolve));
  await stopAllServers();
  tmp.cleanup();
});

async function newPage(): Promise<{ context: BrowserContext; page: Page; console: string[] }> {
  const context = await browser.newContext();
  await guardLoopback(context);
  const page = await context.newPage();
  const console: string[] = [];
  page.on('console', (message) => console.push(message.text()));
  return { context, page, console };
}

describe('another site against the keyless dev mode', () => {
  it('cannot frame /docs: Chromium refuses it for frame-ancestors', async () => {
    attackerPage = `<iframe id="f" src="${dev.url}/docs" width="800" height="600"></iframe>`;
    const { context, page, console } = await newPage();
    await page.goto(attackerUrl);
    await waitFor('the frame to be refused', async () => console.some((line) => line.includes('frame-ancestors')));
    const framed = page.frames().find((frame) => frame !== page.mainFrame());
    expect(framed?.url()).not.toContain('/docs');
    await context.close();
  });

  it('cannot cancel or approve a workflow with a no-cors POST', async () => {
    const api = serverApi(dev);
    const { id } = await api.submit({
      name: 'needs-approval',
      task: { type: 'deploy', complexity: 'critical' },
      agents: { a: { model: 'sim/haiku' } },
      root: { type: 'prompt', name: 'go', agent: 'a', user: 'deploy' },
    });
    const before = await api.getJson<{ checkpoint: { state: string } }>(`/v1/workflows/${id}`);
    expect(before.checkpoint.state).toBe('pending');
    attackerPage = `<script>
      Promise.all([
        fetch('${dev.url}/v1/workflows/${id}/approve', { method: 'POST', mode: 'no-cors' }),
        fetch('${dev.url}/v1/workflows/${id}/cancel', { method: 'POST', mode: 'no-cors', body: 'x' }),
      ]).then(() => { document.title = 'sent'; }, (e) => { document.title = 'error ' + e; });
    </script>`;
    const { context, page } = await newPage();
    const answers: number[] = [];
    page.on('response', (response) => {
      if (response.url().startsWith(dev.url)) answers.push(response.status());
    });
    await page.goto(attackerUrl);
    await waitFor('both POSTs to be answered', async () => answers.length === 2);
    expect(answers).toEqual([403, 403]);
    const after = await api.getJson<{ status: string; checkpoint: { state: string } }>(`/v1/workflows/${id}`);
    expect(after).toMatchObject({ status: 'idle', checkpoint: { state: 'pending' } });
    await context.close();
  });

  it('cannot read the API through DNS rebinding', async () => {
    const port = new URL(dev.url).port;
    const { context, page } = await newPage();
    // guardLoopback aborts non-loopback names; this one is ours (the resolver maps it to 127.0.0.1).
    await context.unroute('**/*');
    const response = await page.goto(`http://${REBOUND}:${port}/v1/workflows`);
    expect(response?.status()).toBe(403);
    expect(await page.textContent('body')).toContain('loopback host');
    await context.close();
  });
});

describe('/docs and the key', () => {
  it('/docs renders Swagger UI under its CSP with no violation', async () => {
    const { context, page, console } = await newPage();
    const violations: string[] = [];
    await page.exposeFunction('reportViolation', (text: string) => violations.push(text));
    await page.addInitScript({
      content: `document.addEventListener('securitypolicyviolation', (e) =>
        window.reportViolation(e.violatedDirective + ' ' + e.blockedURI));`,
    });
    const response = await page.goto(`${dev.url}/docs`);
    expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    await page.locator('.swagger-ui .opblock').first().waitFor();
    expect(await page.locator('.swagger-ui .opblock').count()).toBeGreaterThan(30);
    expect(violations).toEqual([]);
    expect(console.filter((line) => line.includes('Content Security Policy'))).toEqual([]);
    await context.close();
  });

  it('the dashboard keeps the key in the tab unless asked to remember it', async () => {
    const { context, page } = await newPage();
    const login = async (target: Page, remember: boolean) => {
      await target.goto(`${keyed.url}/dashboard`);
      await target.locator('#key-form').waitFor({ state: 'visible' });
      await target.fill('#key-input', KEY);
      if (remember) await target.check('#key-remember');
      await target.click('#key-form button[type="submit"]');
      await target.locator('[data-figure="Tasks completed"]').waitFor();
    };
    const storage = (target: Page) =>
      target.evaluate<Array<string | null>>(
        `[sessionStorage.getItem('baton.apiKey'), localStorage.getItem('baton.apiKey')]`,
      );

    await login(page, false);
    expect(await storage(page)).toEqual([KEY, null]);
    // A new tab has a fresh sessionStorage: the key is asked for again.
    const second = await context.newPage();
    await second.goto(`${keyed.url}/dashboard`);
    await second.locator('#key-form').waitFor({ state: 'visible' });

    await login(second, true);
    expect(await storage(second)).toEqual([null, KEY]);
    const third = await context.newPage();
    await third.goto(`${keyed.url}/dashboard`);
    await third.locator('[data-figure="Tasks completed"]').waitFor();
    expect(await third.locator('#key-form').isHidden()).toBe(true);

    await third.click('#key-button');
    await third.click('#key-forget');
    expect(await storage(third)).toEqual([null, null]);
    await context.close();
  });
});
