import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngineHarness, type EngineHarness } from '../support/engine-harness.js';
import { advanceUntil } from '../support/manual-clock.js';
import { createGate } from '../support/scripted-model.js';

/**
 * A run resumed after a stop keeps paying from the budget it had (docs/design.md#replay-after-a-crash):
 * the provider requests its earlier execution sent, the one cut off in flight by the stop included,
 * count against its own `maxLlmCalls`, so a workflow stopped one request short of its cap is allowed
 * that one request after the restart, not a fresh budget. The workflow is a declared child with a
 * cap of its own (3) under a root that allows 200, so the tree's budget cannot be what refuses;
 * and a tree keeps the root's budget its children spent from, counted durably before each request.
 */

const CHILD_CAP = 3;

const kidStep = (name: string) => ({ type: 'prompt', name, agent: 'a', user: `kid ${name}` });
const asks = (name: string) => (request: { messages: Array<{ content: unknown }> }) =>
  request.messages[0]?.content === `kid ${name}`;

const definition = {
  name: 'resumed-near-cap',
  agents: { a: { model: 'script/sonnet' } },
  root: {
    type: 'workflow',
    name: 'kid',
    definition: {
      name: 'kid',
      root: { type: 'sequence', name: 'kid-steps', steps: [kidStep('k0'), kidStep('k1'), kidStep('k2')] },
      options: { limits: { maxLlmCalls: CHILD_CAP } },
    },
  },
  options: { cache: false },
};

const opened: EngineHarness[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const h of opened.splice(0)) await h.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function open(databasePath: string, startAt?: number): Promise<EngineHarness> {
  const h = await createEngineHarness({
    env: { DATABASE_PATH: databasePath },
    ...(startAt === undefined ? {} : { startAt }),
  });
  opened.push(h);
  return h;
}

/** A root whose declared child spends from the root's budget (3) before the root's own prompts. */
const tree = {
  name: 'tree-near-cap',
  agents: { a: { model: 'script/sonnet' } },
  root: {
    type: 'sequence',
    name: 'main',
    steps: [
      { type: 'workflow', name: 'kid', definition: { name: 'kid', root: kidStep('k0') } },
      { type: 'prompt', name: 'p1', agent: 'a', user: 'root p1' },
      { type: 'prompt', name: 'p2', agent: 'a', user: 'root p2' },
    ],
  },
  options: { cache: false, limits: { maxLlmCalls: 3 } },
};

describe('a resumed run keeps its request budget', () => {
  it('a child stopped after 2 of its 3 requests sends only one more after the restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-resume-budget-'));
    dirs.push(dir);
    const databasePath = join(dir, 'baton.db');

    // First execution: k0 is answered; k1's request is sent and held until the stop cuts it off.
    const first = await open(databasePath);
    const held = createGate();
    first.model.enqueue(
      { text: 'k0 done', when: asks('k0'), label: 'k0' },
      { text: 'never delivered', when: asks('k1'), until: held.promise, label: 'k1 held' },
    );
    const rootId = await first.submit(definition);
    await advanceUntil(first.clock, () => first.model.inFlight.length === 1);
    expect(first.model.calls.map((call) => call.request.messages[0]?.content)).toEqual(['kid k0', 'kid k1']);
    const [kid] = await first.deps.store.children(rootId);
    expect(kid?.status).toBe('running');
    const stoppedAt = first.clock.now();
    await first.close();
    opened.splice(opened.indexOf(first), 1);

    // Second execution: k1 is asked again (the third request) and answered; k2 would be a fourth.
    const second = await open(databasePath, stoppedAt);
    second.model.enqueue({ text: 'k1 done', when: asks('k1'), label: 'k1 again' });
    const { workflow: root } = await second.runUntilEnd(rootId);
    expect(second.model.calls.map((call) => call.request.messages[0]?.content)).toEqual(['kid k1']);
    const child = await second.deps.store.getById(kid?.id as string);
    expect(child?.status).toBe('failed');
    expect(child?.error).toMatchObject({ code: 'LLM_CALL_LIMIT_EXCEEDED' });
    // The child's own cap refused, not the tree's.
    expect(child?.error?.message).toContain(`the ${CHILD_CAP} provider requests its limit allows`);
    expect(root.status).toBe('failed');
    const sent = (await second.events(kid?.id as string)).filter((e) => e.type === 'agentPromptEnd');
    // Every request the child sent, across both executions: k0, the k1 the stop cut off, k1 again.
    expect(sent.map((e) => [e.payload.node, e.payload.requests, e.payload.error?.code])).toEqual([
      ['k0', 1, undefined],
      ['k1', 1, 'SHUTTING_DOWN'],
      ['k1', 1, undefined],
    ]);
  });

  it("a tree stopped after 2 of its root's 3 requests sends only one more after the restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-resume-budget-'));
    dirs.push(dir);
    const databasePath = join(dir, 'baton.db');

    // The child's k0 is answered; the root's p1 is sent and held until the stop.
    const first = await open(databasePath);
    const held = createGate();
    first.model.enqueue(
      { text: 'k0 done', when: asks('k0'), label: 'k0' },
      { text: 'never delivered', until: held.promise, label: 'p1 held' },
    );
    const rootId = await first.submit(tree);
    await advanceUntil(first.clock, () => first.model.inFlight.length === 1);
    expect(first.model.calls.map((call) => call.request.messages[0]?.content)).toEqual(['kid k0', 'root p1']);
    const stoppedAt = first.clock.now();
    await first.close();
    opened.splice(opened.indexOf(first), 1);

    // The root itself has sent 1 (p1, cut off), so only the tree's count — the child's k0
    // included — leaves room for just p1 again.
    const second = await open(databasePath, stoppedAt);
    second.model.enqueue({ text: 'p1 done', label: 'p1 again' });
    const { workflow: root } = await second.runUntilEnd(rootId);
    expect(second.model.calls.map((call) => call.request.messages[0]?.content)).toEqual(['root p1']);
    expect(root.status).toBe('failed');
    expect(root.error).toMatchObject({ code: 'LLM_CALL_LIMIT_EXCEEDED' });
    expect(root.error?.message).toContain("the 3 provider requests its root's options.limits.maxLlmCalls allows");
  });
});
