import { afterEach, beforeEach } from 'vitest';
import { DEV_TENANT, loadConfig } from '../../src/config.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { WorkflowDefinitionSchema } from '../../src/domain/definition.js';
import type { WorkflowEvent } from '../../src/domain/events.js';
import type { LlmProvider } from '../../src/domain/ports.js';
import type { WorkflowRecord } from '../../src/domain/records.js';
import { createLogger } from '../../src/logging/logger.js';
import { openSqliteStores } from '../../src/store/sqlite/open.js';
import type { ScaleOut } from '../../src/store/store-set.js';
import { advanceUntil, createManualClock, type ManualClock, settleEventLoop } from './manual-clock.js';
import { createScriptedModel, describeRequest, type ScriptedModel } from './scripted-model.js';

/**
 * Runs workflows in process, without HTTP and without sleeping (docs/design.md#house-style): the real deps
 * (createDeps: executor, validation, SQLite `:memory:` store, group commit, event bus, cache) on a
 * manual clock, with a scripted model registered under its own provider prefix (`script/<any>`;
 * DEFAULT_MODEL is `script/default`). Time moves only when the test advances it; `settle()` waits
 * until the engine is blocked on the clock or on the scripted model.
 *
 * `close()` fails the test when the scripted model got a call nobody scripted, when a scripted reply
 * was never used, or when the engine reported an unexpected (INTERNAL) error — so none of these can
 * pass as a quietly failed workflow.
 */

export interface EngineHarnessOptions {
  /** Config variables over the harness's (`DATABASE_PATH=:memory:`, `DEFAULT_MODEL=script/default`). */
  env?: Record<string, string>;
  /** The clock's start (epoch ms); default MANUAL_CLOCK_START. */
  startAt?: number;
  /** Provider prefix of the scripted model; default `script`. */
  prefix?: string;
  /** More providers by prefix, as createDeps takes them. */
  providers?: Record<string, LlmProvider>;
  /** Runs the SQLite stores as if scaled out: the work queue and bus wrapped by this (RunSignals tests). */
  scaleOut?: ScaleOut;
}

export interface Ended {
  /** The terminal record, as the store has it. */
  workflow: WorkflowRecord;
  /** Every stored event of the workflow, in `seq` order. */
  events: WorkflowEvent[];
}

export interface LogLine {
  level: number;
  msg: string;
  err?: { type?: string; message?: string; stack?: string };
  [key: string]: unknown;
}

export interface EngineHarness {
  readonly deps: Deps;
  readonly clock: ManualClock;
  readonly model: ScriptedModel;
  /** Engine "unexpected error" reports (what becomes INTERNAL), except those of unexpected model calls. */
  readonly engineErrors: readonly LogLine[];
  /** Validates the definition like POST /v1/workflows (zod, then executor.submit's rules) and submits it; returns the id. */
  submit(definition: unknown, tenant?: string): Promise<string>;
  cancel(id: string, tenant?: string): Promise<WorkflowRecord | undefined>;
  /** Approves a workflow waiting at its human checkpoint (a critical task), once its wait is announced. */
  approve(id: string, tenant?: string): Promise<WorkflowRecord | undefined>;
  /** Resolves once no setImmediate is pending and microtasks are drained: the engine waits on the clock or the model. */
  settle(): Promise<void>;
  /**
   * The workflow's end, once its committed workflowEnd is published. It does not move the clock: it
   * settles the engine and, when the workflow is still not over, rejects naming what it waits for
   * (scripted calls in flight, clock sleepers) rather than hang. `external: true` waits instead, for
   * a workflow that something outside the harness moves (a provider doing real I/O).
   */
  untilEnd(id: string, options?: { external?: boolean }): Promise<Ended>;
  /**
   * Advances the clock from sleeper to sleeper, settling in between, until the workflow ends. Throws
   * when it is blocked with nobody asleep (a held scripted reply) or would pass `maxAdvanceMs`.
   */
  runUntilEnd(id: string, options?: { maxAdvanceMs?: number }): Promise<Ended>;
  hasEnded(id: string): boolean;
  /** Events of the workflow published so far (committed), in publication order. */
  published(id: string): readonly WorkflowEvent[];
  /** Events of the workflow in the store, in `seq` order. */
  events(id: string): Promise<WorkflowEvent[]>;
  /** Throws when the scripted model received a call nobody scripted. */
  expectNoUnexpectedCalls(): void;
  /** Returns and forgets the engine errors, for a test that provokes one on purpose. */
  takeEngineErrors(): LogLine[];
  /** Closes the deps, then fails on unexpected calls, unused replies and engine errors. Idempotent. */
  close(): Promise<void>;
}

/** The tenant submissions run as unless told: the dev tenant, as without API keys. */
export const DEFAULT_TENANT = DEV_TENANT;
const MAX_EVENTS = 100_000;

export async function createEngineHarness(options: EngineHarnessOptions = {}): Promise<EngineHarness> {
  const clock = createManualClock(options.startAt);
  const model = createScriptedModel({ clock, ...(options.prefix ? { prefix: options.prefix } : {}) });
  let engineErrors: LogLine[] = [];
  const logger = createLogger({
    level: 'warn',
    destination: {
      write(line: string) {
        const parsed = JSON.parse(line) as LogLine;
        if (parsed.level < 50) return;
        // Reported (and failed on) as an unexpected model call already.
        if (parsed.err?.type === 'UnexpectedModelCallError') return;
        engineErrors.push(parsed);
      },
    },
  });
  const config = loadConfig({
    DATABASE_PATH: ':memory:',
    LOG_LEVEL: 'warn',
    DEFAULT_MODEL: `${model.prefix}/default`,
    ...options.env,
  });
  const stores = options.scaleOut && {
    ...openSqliteStores({ clock, warn: (message) => logger.warn(message), config }),
    scaleOut: options.scaleOut,
  };
  const deps = await createDeps(config, {
    clock,
    logger,
    providers: { ...options.providers, [model.prefix]: model },
    ...(stores ? { stores } : {}),
  });

  const published = new Map<string, WorkflowEvent[]>();
  const ended = new Set<string>();
  const waiting = new Map<string, Array<() => void>>();
  const unsubscribe = deps.events.subscribeAll((event) => {
    let list = published.get(event.workflowId);
    if (!list) {
      list = [];
      published.set(event.workflowId, list);
    }
    list.push(event);
    if (event.type !== 'workflowEnd') return;
    ended.add(event.workflowId);
    for (const resolve of waiting.get(event.workflowId) ?? []) resolve();
    waiting.delete(event.workflowId);
  });
  await deps.executor.start();

  const events = (id: string) => deps.store.events(id, 0, MAX_EVENTS);

  async function untilEnd(id: string, { external = false } = {}): Promise<Ended> {
    if (!ended.has(id) && !external) {
      await settleEventLoop();
      if (!ended.has(id)) throw new Error(`${blocked(id)}: advance the clock, open a gate, or use runUntilEnd`);
    }
    if (!ended.has(id)) {
      await new Promise<void>((resolve) => {
        const list = waiting.get(id) ?? [];
        list.push(resolve);
        waiting.set(id, list);
      });
    }
    const workflow = await deps.store.getById(id);
    if (!workflow) throw new Error(`workflow ${id} ended but is not in the store`);
    return { workflow, events: await events(id) };
  }

  function blocked(id: string): string {
    const calls = model.inFlight.map((call) => `#${call.index} ${describeRequest(call.request, model.prefix)}`);
    const sleeping = clock.pending.map((s) => `${s.ms} ms due at +${s.dueAt - clock.now()}`);
    return (
      `workflow ${id} has not ended and the engine is idle: scripted calls in flight [${calls.join('; ')}], ` +
      `clock sleepers [${sleeping.join('; ')}]`
    );
  }

  function expectNoUnexpectedCalls(): void {
    if (model.unexpected.length === 0) return;
    const lines = model.unexpected.map((u) => `  #${u.index} ${describeRequest(u.request, model.prefix)}: ${u.reason}`);
    throw new Error(`the scripted model received ${model.unexpected.length} unexpected call(s):\n${lines.join('\n')}`);
  }

  let closed: Promise<void> | undefined;
  return {
    deps,
    clock,
    model,
    get engineErrors() {
      return engineErrors;
    },

    async submit(definition, tenant = DEFAULT_TENANT) {
      const parsed = WorkflowDefinitionSchema.parse(definition);
      const result = await deps.executor.submit(tenant, parsed);
      if (result.kind !== 'created') throw new Error(`submit answered ${result.kind}`);
      return result.workflow.id;
    },

    cancel: (id, tenant = DEFAULT_TENANT) => deps.executor.cancel(tenant, id),

    async approve(id, tenant = DEFAULT_TENANT) {
      await settleEventLoop();
      return deps.executor.decide(tenant, id, { state: 'approved', reason: null });
    },

    settle: settleEventLoop,

    untilEnd,

    async runUntilEnd(id, { maxAdvanceMs } = {}) {
      await advanceUntil(clock, () => ended.has(id), {
        ...(maxAdvanceMs === undefined ? {} : { maxAdvanceMs }),
        unmet: () => blocked(id),
      });
      return untilEnd(id);
    },

    hasEnded: (id) => ended.has(id),

    published: (id) => published.get(id) ?? [],

    events,

    expectNoUnexpectedCalls,

    takeEngineErrors() {
      const taken = engineErrors;
      engineErrors = [];
      return taken;
    },

    close() {
      closed ??= (async () => {
        await deps.close();
        unsubscribe();
        const problems: string[] = [];
        try {
          expectNoUnexpectedCalls();
        } catch (err) {
          problems.push((err as Error).message);
        }
        if (model.remaining.length > 0) {
          const labels = model.remaining.map((reply, i) => reply.label ?? `#${i}`);
          problems.push(`${model.remaining.length} scripted reply(ies) never used: ${labels.join(', ')}`);
        }
        if (engineErrors.length > 0) {
          const lines = engineErrors.map((l) => `  ${l.msg}: ${l.err?.stack ?? l.err?.message ?? JSON.stringify(l)}`);
          problems.push(`the engine reported ${engineErrors.length} unexpected error(s):\n${lines.join('\n')}`);
        }
        if (problems.length > 0) throw new Error(`engine harness: ${problems.join('\n')}`);
      })();
      return closed;
    },
  };
}

/**
 * A fresh harness for every test of the file (beforeEach), closed after it (afterEach): a test that
 * leaves an unexpected call, an unused reply or an engine error fails. The returned object forwards
 * to the current test's harness.
 */
export function useEngineHarness(options: EngineHarnessOptions = {}): EngineHarness {
  let current: EngineHarness | undefined;
  beforeEach(async () => {
    current = await createEngineHarness(options);
  });
  afterEach(async () => {
    const harness = current;
    current = undefined;
    await harness?.close();
  });
  return new Proxy({} as EngineHarness, {
    get(_target, key) {
      if (!current) throw new Error('the engine harness exists only inside a test (beforeEach creates it)');
      return Reflect.get(current, key);
    },
  });
}
