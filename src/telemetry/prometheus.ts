import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { WorkflowEvent } from '../domain/events.js';
import type { EventBus, LeaseStats, ModelClass } from '../domain/ports.js';
import { REFLECTION_DECISIONS, REFLECTION_LEVELS } from '../domain/reflection.js';
import { STATUSES } from '../domain/status.js';

/**
 * Prometheus metrics (docs/design.md#http-api-conventions `GET /metrics`): HTTP traffic observed by the API, and
 * workflow,
 * LLM, cache, reflection and retry counters derived from the event bus. Published events are
 * committed events, so the counters count what is durable. Each instance owns its registry (never
 * prom-client's global one), so several apps in one process do not collide.
 *
 * Label values come from our own vocabularies; free-form ones (purposes, retry reasons, routes) are
 * capped, then folded into `other`. Models are labelled by provider and tier only: a model id is
 * client text (`sim/<anything>` is accepted) and /metrics may be read without a tenant's key, so an
 * id as a label published one tenant's names to everyone and grew a series per name.
 */
export interface PrometheusMetrics {
  readonly registry: Registry;
  /** One finished HTTP request; `route` is the route pattern (`/v1/workflows/:id`), never the raw URL. */
  observeHttp(method: string, route: string, status: number, seconds: number): void;
  /** Stops listening to the bus; idempotent. */
  close(): void;
}

export interface PrometheusOptions {
  bus: EventBus;
  queueDepth: () => number;
  running: () => number;
  /** WAL frames appended so far (`baton_sqlite_wal_frames_total`); the counter is absent without it. */
  walFrames?: () => number;
  /** Over PostgreSQL, this instance's run leases (`baton_lease_*`); absent without it. */
  leases?: () => LeaseStats;
  /** Process and Node.js runtime metrics (`baton_process_*`, `baton_nodejs_*`); default true. */
  defaultMetrics?: boolean;
  /** The bounded labels of a model id (ModelCatalog.classOf). */
  modelClass: (modelId: string) => ModelClass;
}

const OTHER = 'other';
/** Seconds; from a cache hit (sub-millisecond) to a long SSE stream. */
const HTTP_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds; a simulated call takes microseconds, a long generation minutes. */
const LLM_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Seconds; from a one-step simulated run to the default 10-minute deadline and beyond. */
const WORKFLOW_BUCKETS = [0.01, 0.05, 0.25, 1, 5, 15, 60, 300, 600, 1800, 3600];
const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const REDUNDANT_DEFAULTS = [
  'baton_nodejs_active_handles_total',
  'baton_nodejs_active_requests_total',
  'baton_nodejs_active_resources_total',
];
const TERMINAL_STATUSES = STATUSES.filter((s) => s === 'completed' || s === 'failed' || s === 'cancelled');

/** Keeps the first `max` distinct values (of at most 200 characters), then answers `other`. */
function boundedLabel(max: number): (value: unknown, fallback: string) => string {
  const seen = new Set<string>();
  return (value, fallback) => {
    if (typeof value !== 'string' || value === '') return fallback;
    if (seen.has(value)) return value;
    if (seen.size >= max || value.length > 200) return OTHER;
    seen.add(value);
    return value;
  };
}

function oneOf(vocabulary: readonly string[], value: unknown): string {
  return typeof value === 'string' && vocabulary.includes(value) ? value : OTHER;
}

/** A finite, non-negative number (counters only go up), else 0. */
function amount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

export function createPrometheusMetrics(options: PrometheusOptions): PrometheusMetrics {
  const registry = new Registry();
  const registers = [registry];
  if (options.defaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry, prefix: 'baton_' });
    // Gauges named `_total` break the naming rules (`promtool check metrics` fails on them; prom-client
    // issue #283); each is the sum of a kept `{type}` gauge: `sum(baton_nodejs_active_handles)`.
    for (const name of REDUNDANT_DEFAULTS) registry.removeSingleMetric(name);
  }

  const httpRequests = new Counter({
    name: 'baton_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: 'baton_http_request_duration_seconds',
    help: 'Time to answer an HTTP request (until the response is sent), by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: HTTP_BUCKETS,
    registers,
  });
  const started = new Counter({
    name: 'baton_workflows_started_total',
    help: 'Workflows that started running (child workflows included).',
    registers,
  });
  const finished = new Counter({
    name: 'baton_workflows_finished_total',
    help: 'Workflows that reached a terminal status (child workflows included), by status.',
    labelNames: ['status'] as const,
    registers,
  });
  new Gauge({
    name: 'baton_workflows_running',
    help: 'Root workflows executing in this process now (child workflows run within their root).',
    registers,
    collect() {
      this.set(options.running());
    },
  });
  new Gauge({
    name: 'baton_queue_depth',
    help: 'Workflows waiting in the work queue for an executor slot.',
    registers,
    collect() {
      this.set(options.queueDepth());
    },
  });
  const leases = options.leases;
  if (leases) {
    new Gauge({
      name: 'baton_leases_held',
      help: 'Run leases this instance holds now.',
      registers,
      collect() {
        this.set(leases().held);
      },
    });
    const counted: Record<string, number> = {};
    for (const [key, name, help] of [
      ['claims', 'baton_lease_claims_total', 'Run leases this instance claimed.'],
      ['losses', 'baton_lease_losses_total', 'Run leases this instance lost (not renewed in time, or fenced).'],
      ['reaps', 'baton_lease_reaps_total', 'Expired run leases (of any instance) this instance cleared.'],
      ['fenceRejections', 'baton_lease_fence_rejections_total', 'Commits the lease fence refused.'],
    ] as const) {
      counted[key] = 0;
      new Counter({
        name,
        help,
        registers,
        collect() {
          const total = leases()[key];
          if (total > (counted[key] ?? 0)) {
            this.inc(total - (counted[key] ?? 0));
            counted[key] = total;
          }
        },
      });
    }
  }
  const walFrames = options.walFrames;
  if (walFrames) {
    let counted = 0;
    new Counter({
      name: 'baton_sqlite_wal_frames_total',
      help: 'Frames (database pages) appended to the SQLite WAL by commits, as of the last background checkpoint.',
      registers,
      collect() {
        const total = walFrames();
        if (total > counted) {
          this.inc(total - counted);
          counted = total;
        }
      },
    });
  }
  const llmCalls = new Counter({
    name: 'baton_llm_calls_total',
    help:
      'LLM calls made, by provider, tier, purpose and outcome: a call and its transport retries are one; cache hits and ' +
      'calls refused by a limit are none (the efficiency record counts the same way).',
    labelNames: ['provider', 'tier', 'purpose', 'outcome'] as const,
    registers,
  });
  const llmRequests = new Counter({
    name: 'baton_llm_requests_total',
    help: 'Requests sent to LLM providers, every attempt (what limits.maxLlmCalls bounds), by provider and tier.',
    labelNames: ['provider', 'tier'] as const,
    registers,
  });
  const llmDuration = new Histogram({
    name: 'baton_llm_call_duration_seconds',
    help: 'Duration of LLM calls (transport retries and their waits included), by provider and tier.',
    labelNames: ['provider', 'tier'] as const,
    buckets: LLM_BUCKETS,
    registers,
  });
  const workflowDuration = new Histogram({
    name: 'baton_workflow_duration_seconds',
    help: 'Duration of finished workflows, from start to end, by status.',
    labelNames: ['status'] as const,
    buckets: WORKFLOW_BUCKETS,
    registers,
  });
  const llmTokens = new Counter({
    name: 'baton_llm_tokens_total',
    help: 'Tokens of completed LLM provider calls, by provider, tier and direction (input or output).',
    labelNames: ['provider', 'tier', 'direction'] as const,
    registers,
  });
  const llmCost = new Counter({
    name: 'baton_llm_cost_usd_total',
    help:
      'Estimated cost in US dollars of completed LLM provider calls, by provider and tier; simulated="true" is ' +
      'what sim/* calls would have cost (never add the two).',
    labelNames: ['provider', 'tier', 'simulated'] as const,
    registers,
  });
  const cacheLookups = new Counter({
    name: 'baton_cache_lookups_total',
    help: 'Response-cache lookups, by result (hit or miss).',
    labelNames: ['result'] as const,
    registers,
  });
  const cacheTokensSaved = new Counter({
    name: 'baton_cache_tokens_saved_total',
    help: 'Input and output tokens not spent thanks to response-cache hits.',
    registers,
  });
  const cacheCostSaved = new Counter({
    name: 'baton_cache_cost_saved_usd_total',
    help:
      'Estimated US dollars not spent thanks to response-cache hits; simulated="true" is what sim/* answers ' +
      'would have cost at their tier price, not money.',
    labelNames: ['simulated'] as const,
    registers,
  });
  const reflections = new Counter({
    name: 'baton_reflections_total',
    help: 'Reflections (self-correction) that reached a decision, by level and decision.',
    labelNames: ['level', 'decision'] as const,
    registers,
  });
  const retries = new Counter({
    name: 'baton_retries_total',
    help: 'Transport retries of LLM provider calls, by reason.',
    labelNames: ['reason'] as const,
    registers,
  });

  // Known series start at zero, so rates and absence alerts work before the first event.
  for (const status of TERMINAL_STATUSES) finished.labels({ status }).inc(0);
  for (const result of ['hit', 'miss']) cacheLookups.labels({ result }).inc(0);
  for (const simulated of ['true', 'false']) cacheCostSaved.labels({ simulated }).inc(0);
  for (const level of REFLECTION_LEVELS)
    for (const decision of REFLECTION_DECISIONS) reflections.labels({ level, decision }).inc(0);

  const modelLabels = (id: unknown): ModelClass =>
    typeof id === 'string' && id !== '' ? options.modelClass(id) : { provider: 'unknown', tier: 'other' };
  const purposeLabel = boundedLabel(16);
  const reasonLabel = boundedLabel(16);
  const routeLabel = boundedLabel(256);

  const onEvent = (event: WorkflowEvent): void => {
    switch (event.type) {
      case 'workflowStart':
        started.inc();
        return;
      case 'workflowEnd': {
        const status = oneOf(TERMINAL_STATUSES, event.payload.status);
        finished.inc({ status });
        workflowDuration.observe({ status }, amount(event.payload.durationMs) / 1000);
        return;
      }
      case 'agentPromptEnd': {
        const { model: id, purpose, error, requests, duration, tokenUsage, costUsd, simulated } = event.payload;
        const model = modelLabels(id);
        llmCalls.inc({
          ...model,
          purpose: purposeLabel(purpose, 'prompt'),
          outcome: error === undefined ? 'ok' : 'error',
        });
        llmRequests.inc(model, amount(requests));
        llmDuration.observe(model, amount(duration) / 1000);
        llmTokens.inc({ ...model, direction: 'input' }, amount(tokenUsage?.inputTokens));
        llmTokens.inc({ ...model, direction: 'output' }, amount(tokenUsage?.outputTokens));
        llmCost.inc({ ...model, simulated: simulated === true ? 'true' : 'false' }, amount(costUsd));
        return;
      }
      case 'cacheHit': {
        const { tokenUsage, costSavedUsd, simulated } = event.payload;
        cacheLookups.inc({ result: 'hit' });
        cacheTokensSaved.inc(amount(tokenUsage.inputTokens) + amount(tokenUsage.outputTokens));
        cacheCostSaved.inc({ simulated: simulated === true ? 'true' : 'false' }, amount(costSavedUsd));
        return;
      }
      case 'cacheMiss':
        cacheLookups.inc({ result: 'miss' });
        return;
      case 'reflectionEnd':
        reflections.inc({
          level: oneOf(REFLECTION_LEVELS, event.payload.level),
          decision: oneOf(REFLECTION_DECISIONS, event.payload.decision),
        });
        return;
      case 'retry':
        retries.inc({ reason: reasonLabel(event.payload.reason, 'unknown') });
        return;
      default:
        return;
    }
  };
  let unsubscribe: (() => void) | undefined = options.bus.subscribeAll(onEvent);

  return {
    registry,
    observeHttp(method, route, status, seconds) {
      const labels = {
        method: HTTP_METHODS.has(method) ? method : OTHER,
        route: routeLabel(route, 'unmatched'),
      };
      httpRequests.inc({ ...labels, status: Number.isInteger(status) ? String(status) : OTHER });
      httpDuration.observe(labels, Math.max(0, Number.isFinite(seconds) ? seconds : 0));
    },
    close() {
      unsubscribe?.();
      unsubscribe = undefined;
    },
  };
}
