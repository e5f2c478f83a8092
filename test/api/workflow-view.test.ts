import { describe, expect, it } from 'vitest';
import { quickStartExample } from '../../src/api/http/examples.js';
import type { Totals } from '../../src/api/http/usage-totals.js';
import {
  buildNodeTree,
  NO_CHILD_TREES,
  renderTreeText,
  toWorkflowView,
} from '../../src/api/workflows/workflow-view.js';
import type { NodeRecord, WorkflowRecord } from '../../src/domain/records.js';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5);
const zero = { providerCalls: 0, tokensIn: 0, tokensOut: 0, costUsd: 0, simulatedCostUsd: 0 };
const totals: Totals = { durationMs: null, ...zero, withChildren: zero };

function workflow(over: Partial<WorkflowRecord> = {}): WorkflowRecord {
  return {
    id: 'wf_1',
    tenantId: 'default',
    name: 'review-pr',
    status: 'running',
    correlationId: null,
    parentWorkflowId: null,
    parentNodeId: null,
    rootWorkflowId: 'wf_1',
    depth: 0,
    traceId: 'trace_1',
    definition: quickStartExample as unknown as WorkflowRecord['definition'],
    output: undefined,
    error: null,
    cancelRequested: false,
    checkpoint: null,
    routing: null,
    createdAt: T0,
    startedAt: T0 + 10,
    endedAt: null,
    ...over,
  };
}

function node(id: string, parentId: string | null, position: number, over: Partial<NodeRecord> = {}): NodeRecord {
  return {
    id,
    workflowId: 'wf_1',
    parentId,
    name: id,
    type: 'prompt',
    position,
    depth: 0,
    status: 'completed',
    attempts: 1,
    output: null,
    error: null,
    childWorkflowId: null,
    cacheKeys: [],
    startedAt: T0,
    endedAt: T0 + 5,
    ...over,
  };
}

describe('toWorkflowView', () => {
  it('orders children by position whatever the row order, and formats times as ISO Z', () => {
    const nodes = [
      node('b', 'root', 1),
      node('root', null, 0, { type: 'sequence', status: 'running', endedAt: null }),
      node('a', 'root', 0),
    ];
    const view = toWorkflowView(workflow(), nodes, NO_CHILD_TREES, totals);
    expect(view.tree?.children.map((c) => c.name)).toEqual(['a', 'b']);
    expect(view.createdAt).toBe('2025-01-02T03:04:05.000Z');
    expect(view.endedAt).toBeNull();
    expect(view.durationMs).toBeNull();
    expect(view.output).toBeNull();
    expect(view.tree?.children[0]?.durationMs).toBe(5);
    expect(view.links.cancel).toBe('/v1/workflows/wf_1/cancel');
  });

  it("nests a child workflow's root under its workflow node", () => {
    const child = buildNodeTree([node('c-root', null, 0, { name: 'inner', workflowId: 'wf_2', status: 'failed' })]);
    const nodes = [
      node('root', null, 0, { type: 'sequence', name: 'main' }),
      node('sub', 'root', 0, { type: 'workflow', childWorkflowId: 'wf_2', status: 'failed' }),
    ];
    const view = toWorkflowView(
      workflow({ status: 'failed' }),
      nodes,
      { declared: new Map([['wf_2', child as NonNullable<typeof child>]]), spawned: new Map() },
      totals,
    );
    expect(renderTreeText(view)).toBe(
      ['✗ review-pr [failed]', '  ✓ main [completed]', '    ✗ sub [failed]', '      ✗ inner [failed]', ''].join('\n'),
    );
  });

  it('renders every status symbol', () => {
    const nodes = [
      node('root', null, 0, { type: 'parallel', status: 'running' }),
      node('i', 'root', 0, { status: 'idle' }),
      node('c', 'root', 1, { status: 'cancelled' }),
    ];
    expect(renderTreeText(toWorkflowView(workflow(), nodes, NO_CHILD_TREES, totals))).toBe(
      ['◐ review-pr [running]', '  ◐ root [running]', '    ○ i [idle]', '    ⊘ c [cancelled]', ''].join('\n'),
    );
  });

  it('lists spawned child workflows under the node that spawned them, marked spawned', () => {
    // Spawned children were missing from the tree (only `workflow` nodes were followed).
    const spawned = buildNodeTree(
      [node('s-root', null, 0, { name: 'helper', workflowId: 'wf_3' })],
      NO_CHILD_TREES,
      'wf_3',
    );
    const nodes = [node('root', null, 0, { type: 'sequence', name: 'main' }), node('ask', 'root', 0)];
    const view = toWorkflowView(
      workflow(),
      nodes,
      { declared: new Map(), spawned: new Map([['ask', [spawned as NonNullable<typeof spawned>]]]) },
      totals,
    );
    expect(view.tree?.children[0]?.children[0]).toMatchObject({ name: 'helper', spawnedWorkflowId: 'wf_3' });
    expect(view.tree?.spawnedWorkflowId).toBeNull();
    expect(renderTreeText(view)).toBe(
      [
        '◐ review-pr [running]',
        '  ✓ main [completed]',
        '    ✓ ask [completed]',
        '      ✓ helper [completed] (spawned)',
        '',
      ].join('\n'),
    );
  });
});
