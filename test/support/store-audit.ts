import Database from 'better-sqlite3';
import { identityOf, roleOf, turnsOf } from './process-workload.js';

/**
 * A read-only look at a baton database left behind by a killed server (crash-cycles suite):
 * `PRAGMA integrity_check`, the workflows and nodes it holds (each node named by the identity the
 * workload gave it, see process-workload.ts), and every record a completed node or a terminal
 * workflow must have committed with it — events, spans and metrics rows — listed as problems when
 * missing. Table and view names are the migrations' (migrations/sqlite/0001, 0003, 0006, 0008, 0010).
 */

export interface WorkflowRow {
  id: string;
  status: string;
  parentId: string | null;
  /** The node a child was spawned (or created) under. */
  parentNodeId: string | null;
  /** The tag of a root workflow ("wf001-…"), the "<tag> child" task of a spawned child. */
  identity: string;
  /** A spawned child's task (its identity is the first line). */
  task: string | undefined;
  output: unknown;
  error: { code: string; message: string } | null;
  endedAt: number | null;
}

export interface NodeRow {
  id: string;
  workflowId: string;
  name: string;
  type: string;
  status: string;
  attempts: number;
  output: unknown;
  /** Prompt nodes: the first line of their user message ("<tag> <node>" or "<tag> child"). */
  identity: string;
}

export interface StoreAudit {
  integrity: string;
  workflows: Map<string, WorkflowRow>;
  nodes: NodeRow[];
  /** Spans still open (status NULL). */
  openSpans: number;
  /** One line per missing or inconsistent record of a completed node or terminal workflow. */
  problems: string[];
  /** Completed spawn nodes whose last attempt found the child a dead attempt had spawned. */
  spawnsFoundAgain: number;
  /** Per node identity, the last turn its conversation committed (turnEnd events). */
  committedTurns: Map<string, number>;
}

interface EventRow {
  workflowId: string;
  nodeId: string | null;
  seq: number;
  type: string;
  payload: Record<string, unknown>;
}
interface SpanRow {
  spanId: string;
  workflowId: string;
  nodeId: string | null;
  parentId: string | null;
  type: string;
  status: string | null;
  fields: Record<string, unknown>;
}

/** The part of an efficiency record (src/domain/metrics.ts) the audit compares with the journal. */
interface EfficiencyFigures {
  metrics: { total_agent_calls: number; by_model: Record<string, { tokens_in: number }> };
}

const parse = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

function groupBy<T>(items: readonly T[], key: (item: T) => string | null): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    if (k === null) continue;
    const list = groups.get(k) ?? [];
    list.push(item);
    groups.set(k, list);
  }
  return groups;
}

export function auditStore(dbPath: string): StoreAudit {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const integrity = db.pragma('integrity_check', { simple: true }) as string;
    const workflows = readWorkflows(db);
    const nodes = readNodes(db, workflows);
    const events = db
      .prepare('SELECT workflow_id AS workflowId, node_id AS nodeId, seq, type, payload FROM events')
      .all()
      .map((row) => {
        const r = row as Omit<EventRow, 'payload'> & { payload: string };
        return { ...r, seq: Number(r.seq), payload: JSON.parse(r.payload) as Record<string, unknown> };
      });
    const spans = db
      .prepare(
        'SELECT span_id AS spanId, workflow_id AS workflowId, node_id AS nodeId, parent_id AS parentId, type, status, fields FROM spans',
      )
      .all()
      .map((row) => {
        const r = row as Omit<SpanRow, 'fields'> & { fields: string };
        return { ...r, fields: JSON.parse(r.fields) as Record<string, unknown> };
      });
    const counted = (sql: string) =>
      new Map(
        (db.prepare(sql).all() as Array<{ id: string; n: number }>).map(({ id, n }) => [id, n] as [string, number]),
      );
    const toolCalls = counted('SELECT node_id AS id, count(*) AS n FROM tool_calls GROUP BY node_id');
    const reflections = db.prepare('SELECT node_id AS nodeId, success FROM reflections ORDER BY id').all() as Array<{
      nodeId: string;
      success: number | null;
    }>;
    const efficiency = groupBy(
      (
        db.prepare('SELECT workflow_id AS id, record FROM efficiency').all() as Array<{ id: string; record: string }>
      ).map((row) => ({ id: row.id, record: JSON.parse(row.record) as EfficiencyFigures })),
      (row) => row.id,
    );
    const rewards = counted('SELECT workflow_id AS id, count(*) AS n FROM rewards GROUP BY workflow_id');
    const usage = new Map(
      (
        db
          .prepare(
            'SELECT workflow_id AS id, sum(calls) AS calls, sum(tokens_in) AS tokensIn FROM journal GROUP BY workflow_id',
          )
          .all() as Array<{ id: string; calls: number; tokensIn: number }>
      ).map((row) => [row.id, row]),
    );

    const found = { spawnsFoundAgain: 0 };
    const problems = [
      ...nodeProblems(nodes, found, {
        events: groupBy(events, (e) => e.nodeId),
        spans: groupBy(spans, (s) => s.nodeId),
        toolCalls,
        reflections: groupBy(reflections, (r) => r.nodeId),
        workflows,
      }),
      ...workflowProblems(workflows, {
        events: groupBy(events, (e) => (e.nodeId === null ? e.workflowId : null)),
        spans: groupBy(spans, (s) => s.workflowId),
        efficiency,
        rewards,
        usage,
      }),
    ];
    const openSpans = spans.filter((s) => s.status === null).length;
    const identities = new Map(nodes.map((n) => [n.id, n.identity]));
    const committedTurns = new Map<string, number>();
    for (const e of events) {
      const identity = e.type === 'turnEnd' && e.nodeId !== null ? identities.get(e.nodeId) : undefined;
      if (identity === undefined) continue;
      committedTurns.set(identity, Math.max(committedTurns.get(identity) ?? 0, Number(e.payload.turn)));
    }
    return { integrity, workflows, nodes, openSpans, problems, ...found, committedTurns };
  } finally {
    db.close();
  }
}

function readWorkflows(db: Database.Database): Map<string, WorkflowRow> {
  const rows = db
    .prepare(
      'SELECT id, status, parent_workflow_id AS parentId, parent_node_id AS parentNodeId, definition, output, error, ended_at AS endedAt FROM workflows',
    )
    .all() as Array<{
    id: string;
    status: string;
    parentId: string | null;
    parentNodeId: string | null;
    definition: string;
    output: string | null;
    error: string | null;
    endedAt: number | null;
  }>;
  const workflows = new Map<string, WorkflowRow>();
  for (const row of rows) {
    const input = (parse(row.definition) as { input?: { tag?: string; task?: string } }).input ?? {};
    workflows.set(row.id, {
      id: row.id,
      status: row.status,
      parentId: row.parentId,
      parentNodeId: row.parentNodeId,
      identity: (row.parentId === null ? input.tag : input.task?.split('\n')[0]) ?? `?${row.id}`,
      task: input.task,
      output: parse(row.output),
      error: parse(row.error) as WorkflowRow['error'],
      endedAt: row.endedAt,
    });
  }
  return workflows;
}

function readNodes(db: Database.Database, workflows: Map<string, WorkflowRow>): NodeRow[] {
  const rows = db
    .prepare(
      'SELECT id, workflow_id AS workflowId, name, type, status, attempts, output FROM nodes ORDER BY workflow_id, position',
    )
    .all() as Array<Omit<NodeRow, 'identity' | 'output'> & { output: string | null }>;
  return rows.map((row) => {
    const workflow = workflows.get(row.workflowId);
    // A spawned child's one prompt is its task; a root's nodes are "<tag> <node>".
    const identity =
      workflow === undefined
        ? `?${row.id}`
        : workflow.parentId === null
          ? identityOf(workflow.identity, row.name)
          : workflow.identity;
    return { ...row, output: parse(row.output), identity };
  });
}

function nodeProblems(
  nodes: readonly NodeRow[],
  found: { spawnsFoundAgain: number },
  by: {
    events: Map<string, EventRow[]>;
    spans: Map<string, SpanRow[]>;
    toolCalls: Map<string, number>;
    reflections: Map<string, Array<{ success: number | null }>>;
    workflows: Map<string, WorkflowRow>;
  },
): string[] {
  const problems: string[] = [];
  for (const node of nodes) {
    if (node.status !== 'completed') continue;
    const miss = (what: string) => problems.push(`${node.identity} (${node.type} ${node.id}, completed): ${what}`);
    const events = by.events.get(node.id) ?? [];
    const spans = by.spans.get(node.id) ?? [];
    const count = (list: readonly EventRow[], type: string, where: (e: EventRow) => boolean = () => true) =>
      list.filter((e) => e.type === type && where(e)).length;

    // The attempt that completed: the events from its stepStart on.
    const lastStart = Math.max(...events.filter((e) => e.type === 'stepStart').map((e) => e.seq));
    if (!Number.isFinite(lastStart)) {
      miss('no stepStart event');
      continue;
    }
    const final = events.filter((e) => e.seq >= lastStart);
    // Turns dead attempts committed are replayed from the store, not asked again: the node's
    // conversation began after its last attempt that ended before the final one.
    const lastEnded = Math.max(0, ...events.filter((e) => e.type === 'stepEnd' && e.seq < lastStart).map((e) => e.seq));
    const conversation = events.filter((e) => e.seq > lastEnded);
    const replayed = conversation.filter((e) => e.type === 'turnEnd' && e.seq < lastStart).map((e) => e.payload.kind);
    if (count(final, 'stepEnd', (e) => e.payload.status === 'completed' && e.payload.attempt === node.attempts) !== 1) {
      miss(`no stepEnd(completed) for attempt ${node.attempts}`);
    }
    if (node.type === 'sequence' || node.type === 'parallel') {
      if (!spans.some((s) => s.type === 'custom_span' && s.status === 'ok')) miss(`no ok custom_span (${node.type})`);
      continue;
    }
    if (node.type !== 'prompt') continue;

    const role = roleOf(node.identity.split(' ')[1] ?? '');
    const turns = turnsOf(role) - replayed.length;
    // The completed attempt's agent_span is the node's only ok one; earlier ones ended interrupted.
    const agents = spans.filter((s) => s.type === 'agent_span' && s.status === 'ok');
    if (agents.length !== 1) {
      miss(`${agents.length} ok agent_spans`);
      continue;
    }
    const under = spans.filter((s) => s.parentId === agents[0]?.spanId);
    const of = (type: string, where: (s: SpanRow) => boolean = () => true) =>
      under.filter((s) => s.type === type && where(s));
    if (!spans.some((s) => s.type === 'handoff_span')) miss('no handoff_span');
    const generations = of('generation_span');
    if (generations.length !== turns || generations.some((s) => s.status !== 'ok')) {
      miss(`generation_spans ${JSON.stringify(generations.map((s) => s.status))}, expected ${turns} ok`);
    }
    // Each generation is a provider answer (agentPromptEnd without error) or a cache hit.
    const answered =
      count(final, 'agentPromptEnd', (e) => e.payload.error === undefined && e.payload.attempt === node.attempts) +
      count(final, 'cacheHit');
    if (answered !== turns) miss(`${answered} answers in the final attempt's events, expected ${turns}`);

    if (role === 'tool' || role === 'spawn') {
      const tool = role === 'tool' ? 'inspect_current_node' : 'request_spawn_workflow';
      // One tool turn per call but the last, minus those replayed from a dead attempt's commits.
      const own = turnsOf(role) - 1 - replayed.filter((kind) => kind === 'tool').length;
      const spansOk = of('function_span', (s) => s.status === 'ok' && s.fields.function_name === tool).length;
      if (spansOk !== own) miss(`${spansOk} ok function_spans of ${tool}, expected ${own}`);
      const invoked = count(final, 'toolInvocation', (e) => e.payload.toolName === tool && e.payload.isError === false);
      if (invoked !== own) miss(`${invoked} toolInvocations of ${tool} in the final attempt, expected ${own}`);
      // Tool analytics rows commit with their toolInvocation events, dead attempts' included.
      const invocations = count(events, 'toolInvocation');
      const rows = by.toolCalls.get(node.id) ?? 0;
      if (rows !== invocations) miss(`${rows} tool_calls rows for ${invocations} toolInvocation events`);
    }
    if (role === 'spawn') {
      // The receipt the model got names a child of this node (spawned now, or by a dead attempt).
      const receipt = conversation.filter((e) => e.type === 'toolInvocation').at(-1)?.payload.output as
        | { workflowId?: string }
        | undefined;
      const child = by.workflows.get(receipt?.workflowId ?? '');
      if (child?.parentNodeId !== node.id) {
        miss(`the spawn receipt ${JSON.stringify(receipt)} names no child of the node`);
      } else if (replayed.length === 0 && !final.some((e) => e.type === 'spawnRequested')) found.spawnsFoundAgain++;
      for (const e of events.filter((x) => x.type === 'spawnRequested')) {
        if (by.workflows.get(String(e.payload.childWorkflowId))?.parentNodeId !== node.id) {
          miss(`spawned child ${String(e.payload.childWorkflowId)} has no row under the node`);
        }
      }
    }
    if (role === 'reflect') {
      // The re-ask is a turn: replayed from its commit, its records belong to the dead attempt.
      const own = replayed.includes('reask') ? 0 : 1;
      for (const type of ['invalidResponse', 'reflectionStart', 'reflectionEnd']) {
        if (count(final, type) !== own) miss(`${count(final, type)} ${type} events in the final attempt`);
      }
      if (of('custom_span', (s) => s.fields.operation_name === 'reflection').length !== own) {
        miss(`no ${own} reflection span`);
      }
      const checks = of('guardrail_span', (s) => s.fields.guardrail_name === 'response_format');
      if (checks.map((s) => s.fields.triggered).join() !== (own ? 'true,false' : 'false')) {
        miss(`response_format checks ${JSON.stringify(checks.map((s) => s.fields.triggered))}`);
      }
      // A reflection row commits with its reflectionStart event; the last one is settled a success.
      const rows = by.reflections.get(node.id) ?? [];
      if (rows.length !== count(events, 'reflectionStart')) {
        miss(`${rows.length} reflections rows for ${count(events, 'reflectionStart')} reflectionStart events`);
      }
      if (rows.at(-1)?.success !== 1) miss(`last reflection row success ${String(rows.at(-1)?.success)}`);
    }
  }
  return problems;
}

function workflowProblems(
  workflows: Map<string, WorkflowRow>,
  by: {
    events: Map<string, EventRow[]>;
    spans: Map<string, SpanRow[]>;
    efficiency: Map<string, Array<{ record: EfficiencyFigures }>>;
    rewards: Map<string, number>;
    usage: Map<string, { calls: number; tokensIn: number }>;
  },
): string[] {
  const problems: string[] = [];
  for (const workflow of workflows.values()) {
    const miss = (what: string) =>
      problems.push(`workflow ${workflow.identity} (${workflow.id}, ${workflow.status}): ${what}`);
    // The usage columns are what the workflow's generation spans add up to (journal.repo.ts).
    const generations = (by.spans.get(workflow.id) ?? []).filter((s) => s.type === 'generation_span');
    const calls = generations.filter((s) => s.fields.cache_hit === false).length;
    const tokensIn = generations.reduce((sum, s) => sum + Number(s.fields.tokens_in ?? 0), 0);
    const usage = by.usage.get(workflow.id) ?? { calls: 0, tokensIn: 0 };
    if (usage.calls !== calls || usage.tokensIn !== tokensIn) {
      miss(`journal usage ${JSON.stringify(usage)} but generation spans count ${calls} calls, ${tokensIn} tokens in`);
    }
    if (workflow.status !== 'completed' && workflow.status !== 'failed' && workflow.status !== 'cancelled') continue;
    const ends = (by.events.get(workflow.id) ?? []).filter((e) => e.type === 'workflowEnd');
    if (ends.length !== 1 || ends[0]?.payload.status !== workflow.status) {
      miss(`workflowEnd events ${JSON.stringify(ends.map((e) => e.payload.status))}`);
    }
    // The efficiency record and reward commit with the terminal state (migrations/sqlite/0006).
    const records = by.efficiency.get(workflow.id) ?? [];
    if (records.length !== 1) miss('no efficiency row');
    // Computed from every life's events (the resumed run reads the earlier ones back), it counts
    // the calls and tokens the generation spans of all lives hold.
    const metrics = records[0]?.record.metrics;
    if (metrics) {
      const recordTokensIn = Object.values(metrics.by_model).reduce((sum, m) => sum + m.tokens_in, 0);
      if (metrics.total_agent_calls !== usage.calls || recordTokensIn !== usage.tokensIn) {
        miss(
          `efficiency record counts ${metrics.total_agent_calls} calls, ${recordTokensIn} tokens in; the journal ${usage.calls}, ${usage.tokensIn}`,
        );
      }
    }
    if (by.rewards.get(workflow.id) !== 1) miss('no rewards row');
  }
  return problems;
}
