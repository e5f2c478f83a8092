import { payloadJson, type WorkflowEvent } from '../../domain/events.js';
import type { NodeRecord, WorkflowRecord } from '../../domain/records.js';
import { STATUS_SYMBOL } from '../../domain/status.js';
import type { EventView, NodeView, WorkflowSummary, WorkflowView } from '../http/schemas.js';
import type { Totals } from '../http/usage-totals.js';

/** Pure presentation of store records (no I/O): the route modules fetch, this file shapes. */

export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

function duration(startedAt: number | null, endedAt: number | null): number | null {
  return startedAt === null || endedAt === null ? null : Math.max(0, endedAt - startedAt);
}

export function workflowLinks(id: string, traceId: string): WorkflowSummary['links'] {
  const self = `/v1/workflows/${id}`;
  return {
    self,
    tree: `${self}/tree`,
    events: `${self}/events`,
    cancel: `${self}/cancel`,
    reflections: `${self}/reflections`,
    metrics: `${self}/metrics`,
    trace: `/v1/traces/${traceId}`,
  };
}

export function toWorkflowSummary(w: WorkflowRecord): WorkflowSummary {
  return {
    id: w.id,
    name: w.name,
    status: w.status,
    correlationId: w.correlationId,
    parentWorkflowId: w.parentWorkflowId,
    traceId: w.traceId,
    error: w.error,
    cancelRequested: w.cancelRequested,
    checkpoint: w.checkpoint && { state: w.checkpoint.state, reason: w.checkpoint.reason, at: iso(w.checkpoint.at) },
    createdAt: new Date(w.createdAt).toISOString(),
    startedAt: iso(w.startedAt),
    endedAt: iso(w.endedAt),
    durationMs: duration(w.startedAt, w.endedAt),
    links: workflowLinks(w.id, w.traceId),
  };
}

/** The root NodeViews of a workflow's child workflows, as loadTree (workflows.routes.ts) finds them. */
export interface ChildTrees {
  /** By child workflow id: the child a `workflow` node started, shown inline under it. */
  declared: ReadonlyMap<string, NodeView>;
  /** By the id of the node whose tool call spawned them: children a model started, oldest first. */
  spawned: ReadonlyMap<string, readonly NodeView[]>;
}

export const NO_CHILD_TREES: ChildTrees = { declared: new Map(), spawned: new Map() };

/**
 * Builds the nested node tree from the flat rows (parentId + position). A `workflow` node shows its
 * child run inline, a node that spawned children shows theirs after its own children; the root of a
 * spawned child's tree carries `spawnedWorkflowId` (the id given here).
 */
export function buildNodeTree(
  nodes: readonly NodeRecord[],
  childTrees: ChildTrees = NO_CHILD_TREES,
  spawnedWorkflowId: string | null = null,
): NodeView | null {
  const byParent = new Map<string | null, NodeRecord[]>();
  for (const node of nodes) {
    const siblings = byParent.get(node.parentId);
    if (siblings) siblings.push(node);
    else byParent.set(node.parentId, [node]);
  }
  for (const siblings of byParent.values()) siblings.sort((a, b) => a.position - b.position);

  const toView = (node: NodeRecord): NodeView => {
    const children = (byParent.get(node.id) ?? []).map(toView);
    const child = node.childWorkflowId === null ? undefined : childTrees.declared.get(node.childWorkflowId);
    if (child) children.push(child);
    children.push(...(childTrees.spawned.get(node.id) ?? []));
    return {
      id: node.id,
      name: node.name,
      type: node.type,
      status: node.status,
      attempts: node.attempts,
      startedAt: iso(node.startedAt),
      endedAt: iso(node.endedAt),
      durationMs: duration(node.startedAt, node.endedAt),
      output: node.output ?? null,
      error: node.error,
      childWorkflowId: node.childWorkflowId,
      spawnedWorkflowId: null,
      cacheKeys: node.cacheKeys,
      children,
    };
  };

  const root = byParent.get(null)?.[0];
  return root ? { ...toView(root), spawnedWorkflowId } : null;
}

export function toWorkflowView(
  workflow: WorkflowRecord,
  nodes: readonly NodeRecord[],
  childTrees: ChildTrees,
  totals: Totals,
): WorkflowView {
  return {
    ...toWorkflowSummary(workflow),
    output: workflow.output ?? null,
    tree: buildNodeTree(nodes, childTrees),
    totals,
  };
}

/**
 * What a terminal acts on or hides: C0, DEL and C1 controls, format characters (bidi controls,
 * zero-width ones), line and paragraph separators, lone surrogates; and `\`, so that an escape
 * written into a name reads as written, not as one of ours.
 */
const UNSAFE_IN_TERMINAL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\\]/gu;

/** A client's or model's words on one line of text: every unsafe character shown as its escape. */
function terminalSafe(text: string): string {
  return text.replace(UNSAFE_IN_TERMINAL, (char) => {
    if (char === '\\') return '\\\\';
    const code = char.codePointAt(0) ?? 0;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * The docs/design.md#events-spans-metrics-and-rewards tree debugger: the workflow itself, then its nodes two spaces
 * deeper per level.
 * Names are escaped (terminalSafe): the text is read in terminals, and a name must not start a
 * line of its own, move the cursor or reverse the text after it.
 */
export function renderTreeText(view: Pick<WorkflowView, 'name' | 'status' | 'tree'>): string {
  const lines = [`${STATUS_SYMBOL[view.status]} ${terminalSafe(view.name)} [${view.status}]`];
  const walk = (node: NodeView, depth: number): void => {
    const spawned = node.spawnedWorkflowId === null ? '' : ' (spawned)';
    lines.push(
      `${'  '.repeat(depth)}${STATUS_SYMBOL[node.status]} ${terminalSafe(node.name)} [${node.status}]${spawned}`,
    );
    for (const child of node.children) walk(child, depth + 1);
  };
  if (view.tree) walk(view.tree, 1);
  return `${lines.join('\n')}\n`;
}

export function toEventView(event: WorkflowEvent): EventView {
  return {
    seq: event.seq,
    type: event.type,
    nodeId: event.nodeId,
    at: new Date(event.at).toISOString(),
    payload: event.payload,
  };
}

/**
 * One SSE frame of an event; its `data` is exactly `JSON.stringify(toEventView(event))`, written
 * out directly because every event of every stream goes through here.
 */
export function toEventFrame(event: WorkflowEvent): string {
  const data = `{"seq":${event.seq},"type":${JSON.stringify(event.type)},"nodeId":${JSON.stringify(event.nodeId)},"at":"${new Date(event.at).toISOString()}","payload":${payloadJson(event)}}`;
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${data}\n\n`;
}
