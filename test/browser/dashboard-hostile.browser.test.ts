import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ARTIFACTS,
  guardLoopback,
  launchChromium,
  type NetworkLog,
  type NetworkTrap,
  type PageWatch,
  serverApi,
  startNetworkTrap,
  staysLocal,
  watchPage,
} from '../support/dashboard-browser.js';
import {
  errorBody,
  type FakeReply,
  type FakeServer,
  type RecordedRequest,
  startFakeAnthropic,
  textMessage,
  toolUseMessage,
} from '../support/fake-anthropic.js';
import {
  BIDI,
  HOSTILE_ANSWER,
  HOSTILE_NAME,
  HOSTILE_TEXT,
  HOSTILE_TOOL_NAME,
  LONG_NAME,
  MARKUP_PAYLOADS,
  megabyteText,
  PWNED_PREFIX,
  SCRIPT_URLS,
  unbrokenWord,
} from '../support/hostile-text.js';
import { reportFigures } from '../support/scale.js';
import {
  REPO_ROOT,
  type ServerProcess,
  startServer,
  stopAllServers,
  tempDir,
  waitFor,
} from '../support/server-process.js';

/**
 * The dashboard (web/) in Chromium against the real server, every page of it, after the server was
 * seeded through its API with hostile strings wherever a client or a model can put free text: model
 * answers (1 MB ones too), prompts, tool results of introspection and retrieval tools, a tool name
 * the model made up, a spawn refused for its name, provider error messages, a checkpoint's rejection
 * reason, and names at their 100-character limit where the API only takes letters.
 *
 * The page runs with its CSP bypassed: the CSP would block inline script anyway, and the test is
 * of what the page does with text, not of the CSP. On every view an in-page audit
 * (test/support/dashboard-audit.browser.js) checks: no element or attribute the page never
 * creates, no `javascript:` URL, no payload global, no dialog, no page error; the page does not
 * scroll sideways and no box or text spills out of the box holding it unless that box scrolls; no
 * text of over 100 000 characters is laid out, one of over 10 000 only in a scrolling box no taller
 * than the viewport, and no main-thread task takes 2 s; the page's own short texts still read left
 * to right; and the payloads are there as text. The audit is first shown to catch each of these on
 * a page built to fail them. Every request is recorded and one to another host is aborted;
 * Chromium's proxy is a trap on 127.0.0.1 that catches whatever the page handlers do not see.
 */

const AUDIT_SCRIPT = path.join(REPO_ROOT, 'test/support/dashboard-audit.browser.js');
const VIEWPORT = { width: 1280, height: 900 };
/**
 * Texts this long must be in a scrolling box, and none may be longer than the maximum: the 1 MB
 * texts are shown in part or not at all.
 */
const BIG_TEXT = { scrollFrom: 10_000, maxLength: 100_000 };
/**
 * Responsive: no main-thread task of a view (from the click or navigation that opened it) may take
 * longer. A real-time bound, so a generous one: the page as fixed stays under ~0.3 s on two busy
 * cores, laying out the 1 MB texts whole took 4-12 s.
 */
const LONGEST_TASK_MS = 2_000;

const MEGABYTE = megabyteText();
/** A checkpoint's rejection reason takes at most 1 000 characters. */
const REASON = `${HOSTILE_NAME} ${BIDI} ${SCRIPT_URLS.join(' ')} ${unbrokenWord(700, 'R')}`.slice(0, 1_000);
/** `anthropic/` and 190 more: the longest model id a definition may name. */
const LONG_MODEL = `anthropic/${unbrokenWord(190, 'm')}`;
const LONG_AGENT = unbrokenWord(100, 'A');
const LONG_CORPUS = unbrokenWord(100, 'K');
/** What the introspecting agent names the child it may spawn (a hostile name is refused). */
const SPAWNED_NAME = 'spawned by a hostile agent';

/** Pieces of the hostile text that must be on the page as text (the tags themselves, not what they do). */
const SHOWN_AS_TEXT = [MARKUP_PAYLOADS[0], MARKUP_PAYLOADS[1], MARKUP_PAYLOADS[2]].map(String);

/** What must be on a workflow's page as text. */
function expectedOn(workflow: { id: string; name: string }): string[] {
  if (workflow.id === seeded.rejected?.id) return [REASON];
  if (workflow.name === LONG_NAME) return [LONG_NAME, LONG_AGENT, LONG_MODEL, unbrokenWord(100, 'P'), ...SHOWN_AS_TEXT];
  return SHOWN_AS_TEXT;
}

/**
 * A page that fails every check of the audit once: an injected image with a handler, an inline
 * script that also keeps the main thread for 300 ms, a `javascript:` link, two payload globals, a
 * box and a word wider than their parents, a page wider than the viewport, an open RLO before the
 * page's own text, and 120 000 characters in a box that does not scroll.
 */
const PROBE_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>probe</title></head><body>
<img src="data:," onerror="window.${PWNED_PREFIX}probe_1=1" style="width:1px">
<script>
  window.${PWNED_PREFIX}probe_2 = 1;
  setTimeout(() => {
    for (const t = performance.now(); performance.now() - t < 300; );
    window.probeBusyDone = true;
  });
</script>
<a href="javascript:void(0)">link</a>
<div id="box-spill" style="width:100px"><div style="width:300px">box</div></div>
<div id="text-spill" style="width:100px">${unbrokenWord(300)}</div>
<div style="width:3000px">wide</div>
<p>present \u202Eleaked <span id="after-override">status completed</span></p>
<pre id="big">${'x '.repeat(60_000)}</pre>
</body></html>`;

const timings: Array<{ view: string; ms: number; longestTaskMs: number }> = [];
let lastViewMs = 0;
let server: ServerProcess;
let fake: FakeServer;
let trap: NetworkTrap;
let browser: Browser;
let page: Page;
let network: NetworkLog;
let watch: PageWatch;
let api: ReturnType<typeof serverApi>;
const tmp = tempDir('baton-hostile-browser-');

const seeded: Record<string, { id: string; traceId: string }> = {};
const figures = {
  views: 0,
  generationsOpened: 0,
  elementsAudited: 0,
  biggestTextShown: 0,
  maxViewMs: 0,
  longestTaskMs: 0,
  maxRoundTripMs: 0,
};

// ---------- the fake model: a policy keyed by a tag in the prompt's first message ----------

type Message = { role: string; content: unknown };
const messagesOf = (request: RecordedRequest) => (request.body as { messages: Message[] }).messages;
const firstMessage = (request: RecordedRequest) => JSON.stringify(messagesOf(request)[0]?.content ?? '');
const turnOf = (request: RecordedRequest) => messagesOf(request).filter((m) => m.role === 'assistant').length + 1;

function toolUses(uses: Array<{ name: string; input: Record<string, unknown> }>) {
  const message = toolUseMessage('placeholder', {});
  message.content = uses.map((use, i) => ({ type: 'tool_use', id: `toolu_hostile_${i}`, ...use }));
  return { body: message };
}

function hostileModel(request: RecordedRequest): FakeReply {
  const tag = /\[t:([a-z-]+)\]/.exec(firstMessage(request))?.[1];
  const turn = turnOf(request);
  switch (tag) {
    case 'megabyte':
      return { body: textMessage(MEGABYTE) };
    case 'introspect':
      if (turn > 1) return { body: textMessage(HOSTILE_ANSWER) };
      // Tool results full of hostile text: two prior outputs (one of them 1 MB), a refusal quoting
      // a hostile node id, a tool the model made up with a hostile name, a spawn refused for its
      // hostile name (the API's name rules) and a child spawned to do hostile work.
      return toolUses([
        { name: 'inspect_prior_outputs', input: { count: 2 } },
        { name: 'inspect_prior_outputs', input: { nodeId: HOSTILE_NAME } },
        { name: HOSTILE_TOOL_NAME, input: { html: HOSTILE_TEXT } },
        { name: 'inspect_current_node', input: {} },
        { name: 'request_spawn_workflow', input: { name: HOSTILE_NAME, description: `[t:spawned] ${HOSTILE_TEXT}` } },
        { name: 'request_spawn_workflow', input: { name: SPAWNED_NAME, description: `[t:spawned] ${HOSTILE_TEXT}` } },
      ]);
    case 'retrieve':
      if (turn > 1) return { body: textMessage(HOSTILE_ANSWER) };
      return { body: toolUseMessage('retrieve', { query: 'HOSTILE img onerror javascript' }) };
    case 'refused':
      return { status: 400, body: errorBody('invalid_request_error', HOSTILE_TEXT) };
    case 'refused-big':
      return { status: 400, body: errorBody('invalid_request_error', MEGABYTE) };
    default:
      return { body: textMessage(HOSTILE_ANSWER) };
  }
}

// ---------- seeding, through the API ----------

async function seed(): Promise<void> {
  const writer = { model: 'anthropic/claude-hostile-writer' };
  const inspector = {
    model: 'anthropic/claude-hostile-inspector',
    tools: ['inspect_prior_outputs', 'inspect_current_node', 'request_spawn_workflow'],
  };
  const step = (name: string, tag: string, extra: Record<string, unknown> = {}) => ({
    type: 'prompt',
    name,
    agent: 'writer',
    user: `[t:${tag}] ${HOSTILE_TEXT}`,
    ...extra,
  });
  seeded.main = await api.submit({
    name: 'hostile text everywhere',
    input: { note: HOSTILE_TEXT },
    agents: { writer, inspector },
    root: {
      type: 'sequence',
      name: 'main',
      steps: [
        step('produce', 'produce', { user: '[t:produce] {{input.note}}' }),
        step('megabyte', 'megabyte'),
        { ...step('introspect', 'introspect'), agent: 'inspector' },
        step('refused', 'refused', { optional: true }),
        step('refused-big', 'refused-big', { optional: true }),
        step('final', 'megabyte', { user: `[t:megabyte] once more ${HOSTILE_TEXT}` }),
      ],
    },
  });

  seeded.failed = await api.submit({
    name: 'hostile failure',
    agents: { writer },
    root: step('fails', 'refused'),
  });

  seeded.rejected = await api.submit({
    name: 'hostile rejection',
    task: { type: 'hostile_review', complexity: 'critical' },
    agents: { writer },
    root: step('never', 'produce'),
  });

  // Names where the API only takes letters: at their 100-character limit, one unbroken word each.
  const agent = await api.post('/v1/agents', { name: LONG_AGENT, config: { model: LONG_MODEL, system: HOSTILE_TEXT } });
  expect(agent.status, JSON.stringify(agent.body)).toBe(201);
  const corpus = await api.post('/v1/corpora', { name: LONG_CORPUS });
  expect(corpus.status, JSON.stringify(corpus.body)).toBe(201);
  const corpusId = (corpus.body as { id: string }).id;
  const documents = await api.post(`/v1/corpora/${corpusId}/documents`, {
    documents: [
      { title: HOSTILE_NAME, text: `HOSTILE img onerror javascript ${HOSTILE_TEXT}` },
      { title: 'plain', text: 'HOSTILE javascript filler text for the ranking' },
    ],
  });
  expect(documents.status, JSON.stringify(documents.body)).toBe(201);
  // Five successes of one model and task type make a "top performing pattern" that names the model.
  for (let i = 0; i < 5; i += 1) {
    seeded[`long${i}`] = await api.submit({
      name: LONG_NAME,
      task: { type: 'long_names' },
      root: {
        type: 'sequence',
        name: unbrokenWord(100, 'S'),
        steps: [
          { type: 'prompt', name: unbrokenWord(100, 'P'), agent: LONG_AGENT, user: `[t:produce] run ${i}` },
          {
            type: 'prompt',
            name: unbrokenWord(100, 'Q'),
            agent: LONG_AGENT,
            user: `[t:retrieve] run ${i} ${HOSTILE_TEXT}`,
            retrieval: { corpus: LONG_CORPUS, mode: 'tools' },
          },
        ],
      },
    });
  }

  // The checkpoint: rejected with a hostile reason.
  await api.ended(seeded.main.id, 60_000);
  const rejected = await api.post(`/v1/workflows/${seeded.rejected.id}/reject`, { reason: REASON });
  expect(rejected.status, JSON.stringify(rejected.body)).toBe(202);
  for (const ref of Object.values(seeded)) await api.ended(ref.id, 30_000);
}

// ---------- the audit of one view ----------

interface AuditReport {
  longestTaskMs: number;
  injected: string[];
  globals: string[];
  layout: string[];
  big: { found: string[]; shown: Array<{ where: string; length: number }> };
  reversed: string[];
  missingText: string[];
  elements: number;
}

function runAudit(target: Page, expectText: readonly string[]): Promise<AuditReport> {
  const options = { pwnedPrefix: PWNED_PREFIX, bigText: BIG_TEXT, expectText };
  return target.evaluate(`window.__dashboardAudit.run(${JSON.stringify(options)})`) as Promise<AuditReport>;
}

/** Audits the view on screen; everything found must be nothing, and the expected texts must be there. */
async function audit(view: string, expectText: readonly string[], { screenshot = true } = {}): Promise<void> {
  const started = Date.now();
  await page.evaluate(() => 0);
  figures.maxRoundTripMs = Math.max(figures.maxRoundTripMs, Date.now() - started);
  const report = await runAudit(page, expectText);
  figures.views += 1;
  figures.elementsAudited += report.elements;
  figures.longestTaskMs = Math.max(figures.longestTaskMs, report.longestTaskMs);
  timings.push({ view, ms: lastViewMs, longestTaskMs: report.longestTaskMs });
  figures.biggestTextShown = Math.max(figures.biggestTextShown, ...report.big.shown.map((t) => t.length));
  const found = {
    slowTask: report.longestTaskMs > LONGEST_TASK_MS ? [`a ${report.longestTaskMs} ms task`] : [],
    injected: report.injected,
    globals: report.globals,
    layout: report.layout,
    uncontained: report.big.found,
    reversed: report.reversed,
    missingText: report.missingText,
    dialogs: watch.dialogs,
    pageErrors: watch.pageErrors,
    foreign: network.foreign,
    trapped: trap.hits,
  };
  const nothing = Object.fromEntries(Object.keys(found).map((key) => [key, []]));
  // Soft: one run lists every view's findings, not only the first one's.
  expect.soft({ view, ...found }).toEqual({ view, ...nothing });
  if (screenshot) await page.screenshot({ path: path.join(ARTIFACTS, `hostile-${view}.png`), fullPage: true });
}

/**
 * Does `action` (a navigation, a click) and waits until `ready`: how long that took is a figure,
 * and the next audit reports the longest main-thread task since (the view's own work).
 */
async function act(action: () => Promise<unknown>, ready: () => Promise<unknown>): Promise<void> {
  await page.evaluate('window.__dashboardAudit?.reset()');
  const started = Date.now();
  await action();
  await ready();
  lastViewMs = Date.now() - started;
  figures.maxViewMs = Math.max(figures.maxViewMs, lastViewMs);
}

const show = (hash: string, ready: () => Promise<unknown>) =>
  act(() => page.goto(`${server.url}/dashboard${hash}`), ready);

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  trap = await startNetworkTrap();
  browser = await launchChromium([trap.proxyArg]);
  fake = await startFakeAnthropic({ defaultReply: hostileModel });
  server = await startServer({
    dbPath: tmp.dbPath(),
    env: { ANTHROPIC_API_KEY: 'sk-ant-test-key-000', ANTHROPIC_BASE_URL: fake.url },
  });
  api = serverApi(server);
  await seed();
  const context = await browser.newContext({ viewport: VIEWPORT, bypassCSP: true });
  await context.addInitScript({ path: AUDIT_SCRIPT });
  network = await guardLoopback(context);
  page = await context.newPage();
  watch = watchPage(page);
}, 1_200_000);

afterAll(async () => {
  await browser?.close();
  await stopAllServers();
  await fake?.close();
  await trap?.close();
  tmp.cleanup();
});

describe('the dashboard under hostile strings (browser)', () => {
  it('the audit itself finds each thing it looks for, on a page built to fail every check', async () => {
    const probe = await page.context().newPage();
    const url = 'http://127.0.0.1:9/audit-probe';
    // Fulfilled here: the page never reaches the network (port 9 is closed anyway).
    await probe.route(url, (route) => route.fulfill({ contentType: 'text/html; charset=utf-8', body: PROBE_PAGE }));
    await probe.goto(url);
    await probe.waitForFunction('window.probeBusyDone === true');
    const report = await runAudit(probe, ['present', 'absent-text']);
    await probe.close();
    const joined = (list: string[]) => list.join('\n');
    expect(joined(report.injected)).toContain('<img>');
    expect(joined(report.injected)).toContain('onerror=');
    expect(joined(report.injected)).toContain('a script that is not app.js');
    expect(joined(report.injected)).toContain('a link to "javascript:void(0)"');
    expect(report.globals.sort()).toEqual([`${PWNED_PREFIX}probe_1`, `${PWNED_PREFIX}probe_2`]);
    expect(joined(report.layout)).toContain('the page scrolls sideways');
    expect(joined(report.layout)).toMatch(/div#box-spill > div spills \d+px right out of .*div#box-spill/);
    expect(joined(report.layout)).toMatch(/text "W+…" spills \d+px right out of .*div#text-spill/);
    expect(report.big.found).toEqual([
      expect.stringMatching(/^120000 characters laid out in .*pre#big \(at most 100000\)$/),
      expect.stringMatching(/^120000 characters in .*pre#big, in no scrolling box$/),
    ]);
    expect(report.reversed).toEqual([expect.stringMatching(/^"status completed" in .*span#after-override/)]);
    expect(report.missingText).toEqual(['absent-text']);
    expect(report.longestTaskMs).toBeGreaterThanOrEqual(300);
  });

  it('the summary', async () => {
    await show('#/', async () => {
      await page.locator('[data-figure="Tasks completed"]').waitFor();
      await page.locator('.uplot').nth(3).waitFor();
    });
    await audit('summary', [LONG_MODEL]);
  });

  it('the workflow list, also filtered by hostile text', async () => {
    await show('#/workflows', () => page.locator(`a[href="#/workflows/${seeded.main?.id}"]`).waitFor());
    await audit('workflows', [SPAWNED_NAME, LONG_NAME]);
    // The filter form takes the hostile name back as its value; the list answers with what matches.
    const name = encodeURIComponent(HOSTILE_NAME);
    await show(`#/workflows?name=${name}`, () => page.locator('main table').waitFor());
    expect(await page.locator('input[name="name"]').inputValue()).toBe(HOSTILE_NAME);
    await audit('workflows-by-name', []);
    await show(`#/workflows?status=${name}`, () => page.locator('main .error').waitFor());
    await audit('workflows-by-status', []);
  });

  it("every workflow's page (header, tree, output, events, waterfall) and every generation's input and output", async () => {
    const list = await api.getJson<{ items: Array<{ id: string; name: string; traceId: string }> }>(
      '/v1/workflows?limit=100',
    );
    // The seeded ones and the child the introspecting agent spawned (its hostile-named one refused).
    expect(list.items.length).toBe(Object.keys(seeded).length + 1);
    for (const [i, workflow] of list.items.entries()) {
      const view = `workflow-${i}`;
      const trace = await api.getJson<{ spans: unknown[] }>(`/v1/traces/${workflow.traceId}`);
      await show(`#/workflows/${workflow.id}`, async () => {
        await page.locator('#events .event[data-type="workflowEnd"]').waitFor();
        await waitFor(
          'the waterfall',
          async () => (await page.locator('.waterfall .span-bar').count()) === trace.spans.length,
        );
      });
      await audit(view, expectedOn(workflow));
      const generations = page.locator('.wf-row[data-span-type="generation_span"]');
      const count = await generations.count();
      for (let g = 0; g < count; g += 1) {
        await act(
          () => generations.nth(g).click(),
          () => page.locator('.gen-output').waitFor(),
        );
        await audit(`${view}-generation-${g}`, [], { screenshot: g === 0 });
        figures.generationsOpened += 1;
      }
    }
  }, 180_000);

  it('the analytics tables', async () => {
    await show('#/analytics', () => page.locator('h2', { hasText: 'Agent selection strategies' }).waitFor());
    await audit('analytics', [HOSTILE_TOOL_NAME, LONG_MODEL]);
  });

  it('routes made of hostile text show an error or the summary, as text', async () => {
    for (const [i, hash] of [
      `#/workflows/${encodeURIComponent(HOSTILE_NAME)}`,
      `#/workflows/${encodeURIComponent(SCRIPT_URLS[0] ?? '')}`,
      `#/${encodeURIComponent(String(MARKUP_PAYLOADS[1]))}`,
    ].entries()) {
      await show(hash, () => page.locator('main h1, main .error').first().waitFor());
      await audit(`route-${i}`, []);
    }
  });

  it('nothing ran and nothing left the machine over the whole session', () => {
    const hosts = new Set(network.requests.map((request) => new URL(request.url()).host));
    reportFigures('dashboard-hostile', {
      ...figures,
      slowestViews: [...timings].sort((a, b) => b.ms - a.ms).slice(0, 3),
      requests: network.requests.length,
      hosts: [...hosts],
      foreign: network.foreign.length,
      trapped: trap.hits.length,
      dialogs: watch.dialogs.length,
      pageErrors: watch.pageErrors.length,
    });
    expect(network.requests.length).toBeGreaterThan(50);
    expect(network.requests.filter((request) => !staysLocal(request.url()))).toEqual([]);
    expect(network.foreign).toEqual([]);
    expect(trap.hits).toEqual([]);
    expect(watch.dialogs).toEqual([]);
    expect(watch.pageErrors).toEqual([]);
  });
});
