import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/metrics/selection.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';
import { type Difficulty, type QualityFake, startQualityFake, taskMarker } from '../support/quality-fake.js';

/**
 * The learning loop of cost-aware selection, end to end through the HTTP API
 * (docs/workflows.md#cost-aware-selection): 120 tasks alternating easy and hard, each a prompt
 * selecting between a cheap and a top registered agent, then a single review by a mid model that
 * approves exactly the right answers (test/support/quality-fake.ts). Cheap is right on 95% of easy
 * and 20% of hard tasks, top on 98% and 95% at 60× the price. Four arms run the same tasks, each
 * in its own tenant so their histories stay apart: cost_aware, thompson, greedy, and every task
 * pinned to the top agent. Selection draws come from one seeded source, submitted in a fixed order.
 */

const SEED = Number(process.env.COST_AWARE_SEED ?? 24);
const TASKS = 120;
const PRICES = {
  'openai/cheap-1': { input: 0.25, output: 1.25 },
  'openai/mid-1': { input: 2, output: 10 },
  'openai/top-1': { input: 15, output: 75 },
};
/** A solver writes a page of code for a short task; the reviewer reads both and answers a verdict. */
const USAGE = {
  solve: { prompt_tokens: 400, completion_tokens: 800 },
  review: { prompt_tokens: 1300, completion_tokens: 60 },
};

const ARMS = ['cost_aware', 'thompson', 'greedy', 'all_top'] as const;
type Arm = (typeof ARMS)[number];
const KEYS: Record<Arm, string> = {
  cost_aware: 'key-cost-aware-0123456789',
  thompson: 'key-thompson-00123456789',
  greedy: 'key-greedy-0000123456789',
  all_top: 'key-all-top-000123456789',
};
const as = (arm: Arm) => ({ authorization: `Bearer ${KEYS[arm]}` });
const CANDIDATES = ['cheap', 'top'] as const;
type Agent = (typeof CANDIDATES)[number];

let fake: QualityFake;
let t: TestApp;
beforeAll(async () => {
  fake = await startQualityFake({
    seed: SEED,
    solvers: { 'cheap-1': { easy: 0.95, hard: 0.2 }, 'top-1': { easy: 0.98, hard: 0.95 } },
    reviewer: 'mid-1',
    usage: USAGE,
  });
  t = await buildTestApp(
    {
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: 'sk-openai-test-key-000',
      MODEL_PRICES: JSON.stringify(PRICES),
      API_KEYS: ARMS.map((arm) => `${arm}:${KEYS[arm]}`).join(','),
      RATE_LIMIT_PER_MINUTE: '0',
    },
    { random: seededRandom(SEED) },
  );
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

const agentOf = (arm: Arm): unknown =>
  arm === 'all_top' ? 'top' : { select: { role: 'development', candidates: [...CANDIDATES], strategy: arm } };

const workflow = (arm: Arm, difficulty: Difficulty, n: number) => ({
  name: 'solve',
  task: { type: difficulty, complexity: 'simple' },
  options: { cache: false, reflection: { enabled: false } },
  root: {
    type: 'sequence',
    name: 'main',
    steps: [
      {
        type: 'prompt',
        name: 'solve',
        agent: agentOf(arm),
        user: `${taskMarker(difficulty, n)} Solve the task; reply with its answer line.`,
      },
      { type: 'review', name: 'check', agent: 'reviewer', target: 'solve', mode: 'single' },
    ],
  },
});

interface RunRow {
  arm: Arm;
  index: number;
  difficulty: Difficulty;
  agent: Agent;
  success: boolean;
  reviewerVersion: number | undefined;
  costUsd: number;
  selection?: Selection;
}

interface Selection {
  strategy: string;
  candidates: Array<Record<string, unknown>>;
  cost_aware?: Record<string, unknown>;
  savings?: { reference: string | null; saved_usd: number | null; saved_simulated_usd: number | null };
}

const rows: RunRow[] = [];

async function submit(arm: Arm, difficulty: Difficulty, n: number): Promise<{ id: string; traceId: string }> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/workflows',
    headers: as(arm),
    payload: workflow(arm, difficulty, n),
  });
  expect(res.statusCode, res.body).toBe(202);
  return res.json();
}

async function finish(arm: Arm, index: number, difficulty: Difficulty, run: { id: string; traceId: string }) {
  const done = await waitForStatus(t.app, run.id, undefined, 10_000, as(arm));
  const metrics = (
    await t.app.inject({ method: 'GET', url: `/v1/workflows/${run.id}/metrics`, headers: as(arm) })
  ).json();
  const byModel = metrics.efficiency.metrics.by_model as Record<string, { cost_usd: number }>;
  const trace = (await t.app.inject({ method: 'GET', url: `/v1/traces/${run.traceId}`, headers: as(arm) })).json() as {
    spans: Array<{ type: string; to_agent?: string; agent_version?: number; selection?: Selection }>;
  };
  const handoff = trace.spans.find((s) => s.type === 'handoff_span' && s.to_agent !== 'reviewer');
  const review = trace.spans.find((s) => s.type === 'handoff_span' && s.to_agent === 'reviewer');
  rows.push({
    arm,
    index,
    difficulty,
    agent: handoff?.to_agent as Agent,
    success: done.status === 'completed',
    reviewerVersion: review?.agent_version,
    costUsd: Object.values(byModel).reduce((sum, m) => sum + m.cost_usd, 0),
    ...(handoff?.selection === undefined ? {} : { selection: handoff.selection }),
  });
}

/** Per arm: the share of a difficulty's tasks given to an agent, success rate, cost per successful task. */
function figures(arm: Arm, from: number) {
  const of = rows.filter((r) => r.arm === arm && r.index >= from);
  const share = (difficulty: Difficulty, agent: Agent) => {
    const tasks = of.filter((r) => r.difficulty === difficulty);
    return tasks.filter((r) => r.agent === agent).length / tasks.length;
  };
  const successes = of.filter((r) => r.success).length;
  return {
    arm,
    cheapOnEasy: share('easy', 'cheap'),
    topOnHard: share('hard', 'top'),
    successRate: successes / of.length,
    costPerSuccessUsd: of.reduce((sum, r) => sum + r.costUsd, 0) / successes,
  };
}

describe('cost-aware selection learns the cheapest good-enough agent', () => {
  it('runs 120 alternating tasks in four arms through the API', { timeout: 240_000 }, async () => {
    for (const arm of ARMS) {
      // The reviewer is a registered agent too (a review may name one): versioned on its handoff span.
      for (const [name, model, role] of [
        ['cheap', 'openai/cheap-1', 'development'],
        ['top', 'openai/top-1', 'development'],
        ['reviewer', 'openai/mid-1', 'review'],
      ] as const) {
        const config = { model, role, system: role === 'review' ? 'You check answers.' : 'You solve tasks.' };
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/agents',
          headers: as(arm),
          payload: { name, config },
        });
        expect(res.statusCode, res.body).toBe(201);
      }
    }
    for (let index = 0; index < TASKS; index++) {
      const difficulty: Difficulty = index % 2 === 0 ? 'easy' : 'hard';
      const n = Math.floor(index / 2);
      // Submitted one after another (the seeded draws go in a fixed order), then run together.
      const runs: Array<[Arm, { id: string; traceId: string }]> = [];
      for (const arm of ARMS) runs.push([arm, await submit(arm, difficulty, n)]);
      await Promise.all(runs.map(([arm, run]) => finish(arm, index, difficulty, run)));
    }
    expect(rows).toHaveLength(TASKS * ARMS.length);
    // The fake and the review agree: a run succeeds exactly when its agent answers right.
    for (const r of rows) expect(r.success).toBe(fake.isRight(`${r.agent}-1`, r.difficulty, Math.floor(r.index / 2)));
    expect(rows.every((r) => r.reviewerVersion === 1)).toBe(true);
  });

  it('second half: cost_aware picks cheap for easy and top for hard, ≥ 40% cheaper per success, ≤ 2 points less success', () => {
    const half = TASKS / 2;
    const table = ARMS.map((arm) => ({ ...figures(arm, half), whole: figures(arm, 0) }));
    console.log(
      `cost-aware learning, seed ${SEED}, second half (whole run in brackets):\n${table
        .map(
          (f) =>
            `  ${f.arm.padEnd(10)} cheap on easy ${pct(f.cheapOnEasy)} (${pct(f.whole.cheapOnEasy)}), top on hard ` +
            `${pct(f.topOnHard)} (${pct(f.whole.topOnHard)}), success ${pct(f.successRate)} (${pct(f.whole.successRate)}), ` +
            `cost per success $${f.costPerSuccessUsd.toFixed(5)} ($${f.whole.costPerSuccessUsd.toFixed(5)})`,
        )
        .join('\n')}`,
    );
    const [costAware, , , allTop] = table as [(typeof table)[0], unknown, unknown, (typeof table)[0]];
    expect(costAware.cheapOnEasy).toBeGreaterThanOrEqual(0.8);
    expect(costAware.topOnHard).toBeGreaterThanOrEqual(0.9);
    expect(costAware.costPerSuccessUsd).toBeLessThanOrEqual(0.6 * allTop.costPerSuccessUsd);
    expect(costAware.successRate).toBeGreaterThanOrEqual(allTop.successRate - 0.02);
  });

  it('the handoff span shows every candidate’s posterior, expected cost and why the winner won', () => {
    const last = rows.filter((r) => r.arm === 'cost_aware' && r.difficulty === 'easy').at(-1);
    const selection = last?.selection;
    expect(selection?.strategy).toBe('cost_aware');
    expect(selection?.cost_aware).toEqual({
      tolerance: 0.03,
      confidence: 0.9,
      min_runs: 3,
      leader: expect.stringMatching(/^(cheap|top)$/),
      reason: last?.agent === selection?.cost_aware?.leader ? 'leader_cheapest' : 'cheaper_within_tolerance',
    });
    const [cheap, top] = selection?.candidates ?? [];
    // The history it scored by: every earlier easy run of the arm, each once.
    const earlier = rows.filter(
      (r) => r.arm === 'cost_aware' && r.difficulty === 'easy' && r.index < (last?.index ?? 0),
    );
    for (const [shown, agent] of [
      [cheap, 'cheap'],
      [top, 'top'],
    ] as const) {
      const own = earlier.filter((r) => r.agent === agent);
      expect(shown).toMatchObject({
        agent,
        runs: own.length,
        successes: own.filter((r) => r.success).length,
        expected_simulated_cost_usd: 0,
      });
      expect(shown?.expected_cost_usd).toBeCloseTo(own.reduce((sum, r) => sum + r.costUsd, 0) / own.length, 8);
      expect(shown?.score).toEqual(expect.any(Number));
      expect(typeof shown?.eligible).toBe('boolean');
    }
    expect(cheap?.eligible).toBe(true);
    expect(last?.agent).toBe('cheap');
  });

  it('the savings on /v1/analytics/selection and the dashboard equal a computation from the raw runs', async () => {
    const lines: string[] = [];
    for (const arm of ['cost_aware', 'thompson', 'greedy'] as const) {
      const analytics = (
        await t.app.inject({ method: 'GET', url: '/v1/analytics/selection', headers: as(arm) })
      ).json();
      let total = 0;
      for (const difficulty of ['easy', 'hard'] as const) {
        const recomputed = recomputedSavings(arm, difficulty);
        // Each selection's own figure, on its handoff span.
        for (const { row, saved } of recomputed) {
          const shown = row.selection?.savings?.saved_usd ?? null;
          if (saved === null) expect(shown).toBeNull();
          else expect(shown).toBeCloseTo(saved, 7);
        }
        const counted = recomputed.filter((r) => r.saved !== null);
        const saved = counted.reduce((sum, r) => sum + (r.saved ?? 0), 0);
        total += saved;
        const reported = analytics.savings.find(
          (x: { task_type: string; strategy: string }) => x.task_type === difficulty && x.strategy === arm,
        );
        expect(reported).toMatchObject({ runs: TASKS / 2, counted: counted.length, simulated_saved_usd: 0 });
        expect(reported.saved_usd).toBeCloseTo(saved, 5);
      }
      const strategy = analytics.strategies.find((x: { strategy: string }) => x.strategy === arm);
      expect(strategy.saved_usd).toBeCloseTo(total, 5);
      const dashboard = (await t.app.inject({ method: 'GET', url: '/v1/dashboard?days=1', headers: as(arm) })).json();
      expect(dashboard.selection_savings.saved_usd).toBeCloseTo(total, 5);
      expect(dashboard.selection_savings.simulated_saved_usd).toBe(0);
      lines.push(
        `  ${arm.padEnd(10)} saved by selection $${total.toFixed(6)} (${pct(total / (strategy.cost_usd + total))} of the counterfactual)`,
      );
    }
    console.log(`selection savings, seed ${SEED}, whole run:\n${lines.join('\n')}`);
    // Cost-aware saves most: it is the one that takes the cheap agent where it is good enough.
    const saved = await Promise.all(
      (['cost_aware', 'thompson'] as const).map(async (arm) => {
        const res = await t.app.inject({ method: 'GET', url: '/v1/analytics/selection', headers: as(arm) });
        return res.json().strategies.find((x: { strategy: string }) => x.strategy === arm).saved_usd as number;
      }),
    );
    expect(saved[0]).toBeGreaterThan(saved[1] ?? Infinity);
  });
});

/**
 * The counterfactual savings recomputed from the runs alone (docs/workflows.md#counterfactual-savings):
 * before each run, the history of the earlier runs of its arm and task type; the reference is the
 * best observed success rate among agents with ≥ 3 runs (ties: more runs, then the earlier
 * candidate); the saving is its mean cost per run minus the chosen agent's.
 */
function recomputedSavings(arm: Arm, difficulty: Difficulty): Array<{ row: RunRow; saved: number | null }> {
  const history = new Map<Agent, { runs: number; successes: number; cost: number }>();
  const out: Array<{ row: RunRow; saved: number | null }> = [];
  for (const row of rows
    .filter((r) => r.arm === arm && r.difficulty === difficulty)
    .sort((a, b) => a.index - b.index)) {
    let reference: Agent | null = null;
    for (const agent of CANDIDATES) {
      const h = history.get(agent);
      if (!h || h.runs < 3) continue;
      const best = reference === null ? undefined : history.get(reference);
      const rate = h.successes / h.runs;
      const bestRate = best ? best.successes / best.runs : -1;
      if (rate > bestRate || (rate === bestRate && h.runs > (best?.runs ?? 0))) reference = agent;
    }
    const own = history.get(row.agent);
    const ref = reference === null ? undefined : history.get(reference);
    const saved =
      reference === null || ref === undefined
        ? null
        : reference === row.agent
          ? 0
          : own === undefined
            ? null
            : ref.cost / ref.runs - own.cost / own.runs;
    out.push({ row, saved });
    const h = own ?? { runs: 0, successes: 0, cost: 0 };
    history.set(row.agent, {
      runs: h.runs + 1,
      successes: h.successes + (row.success ? 1 : 0),
      cost: h.cost + row.costUsd,
    });
  }
  return out;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
