import { describe, expect, it } from 'vitest';
import { toEventFrame, toEventView } from '../../../src/api/workflows/workflow-view.js';
import type { WorkflowEvent } from '../../../src/domain/events.js';

const base = { workflowId: 'wf_1', tenantId: 't', at: Date.UTC(2026, 0, 2, 3, 4, 5, 6) };

describe('toEventFrame', () => {
  const events: WorkflowEvent[] = [
    {
      ...base,
      seq: 1,
      nodeId: null,
      type: 'workflowStart',
      payload: { name: 'a "quoted" name\n', parentWorkflowId: null },
    },
    {
      ...base,
      seq: 2,
      nodeId: 'nd_1',
      type: 'workflowEnd',
      payload: { status: 'failed', durationMs: 5, error: { code: 'X', message: 'ünïcode \u2028 line' } },
    },
  ];

  it('writes the SSE frame whose data is exactly the JSON of the EventView', () => {
    for (const event of events) {
      expect(toEventFrame(event)).toBe(
        `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(toEventView(event))}\n\n`,
      );
    }
  });
});
