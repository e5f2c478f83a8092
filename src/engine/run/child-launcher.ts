import { AppError } from '../../domain/errors.js';
import type { ChildLauncher } from '../../domain/ports.js';
import type { NodeRecord, WorkflowRecord } from '../../domain/records.js';
import type { RunView } from '../node-context.js';
import { planWorkflow } from '../submission/plan.js';
import type { RunJournal } from './journal.js';
import type { EngineServices } from './services.js';
import type { RunTurnLog } from './turn-log.js';

/**
 * The ChildLauncher of one run: plans the child's rows, records them with the parent's node patch
 * and its childAttached/treeUpdated events in one commit (so a crash finds the child, never a
 * second one), and runs it through the executor under the parent's signal.
 */
export function createChildLauncher(
  view: RunView,
  records: ReadonlyMap<string, NodeRecord>,
  journal: RunJournal,
  turns: Pick<RunTurnLog, 'earlierSpawn'>,
  services: Pick<EngineServices, 'store' | 'clock' | 'runChild' | 'spawns'>,
): ChildLauncher {
  async function find(childId: string): Promise<WorkflowRecord> {
    const child: WorkflowRecord | undefined = await services.store.getById(childId);
    if (!child) throw new AppError('INTERNAL', `child workflow ${childId} has no row`);
    return child;
  }

  return {
    async create({ nodeId, definition }) {
      const parent = view.workflow;
      if (parent.depth + 1 > view.limits.maxDepth) {
        throw new AppError('LIMIT_EXCEEDED', `child workflows may nest at most ${view.limits.maxDepth} deep`);
      }
      const record = records.get(nodeId);
      if (!record) throw new AppError('INTERNAL', `node ${nodeId} has no record`);
      const planned = planWorkflow(definition, {
        tenantId: parent.tenantId,
        now: services.clock.now(),
        parent: { workflow: parent, nodeId },
      });
      journal.addWorkflow(planned);
      journal.patchNode(record, { childWorkflowId: planned.workflow.id });
      journal.emit(nodeId, {
        type: 'childAttached',
        payload: { node: record.name, childWorkflowId: planned.workflow.id, name: definition.name },
      });
      journal.emit(nodeId, { type: 'treeUpdated', payload: { node: record.name } });
      await journal.commit();
      return planned.workflow;
    },

    spawn({ nodeId, definition, requestedName, slot }) {
      const parent = view.workflow;
      const root = parent.rootWorkflowId;
      const { limits } = view;
      const { spawns } = services;
      return spawns.serialize(root, async () => {
        const record = records.get(nodeId);
        if (!record) throw new AppError('INTERNAL', `node ${nodeId} has no record`);
        // Re-run after a crash, the node replays the turn that was in flight, and its model may
        // word the request differently: the spawn at the same slot finds the child the dead
        // execution spawned instead of starting a second (one repeated call, never a second child).
        const earlier = await turns.earlierSpawn(record, slot);
        if (earlier !== undefined) return { workflow: await find(earlier), existing: true };
        if (parent.depth + 1 > limits.maxDepth) {
          throw refusal(`spawned workflows may nest at most ${limits.maxDepth} deep (maxDepth)`);
        }
        if (spawns.inLastMinute(root) >= spawns.limitPerMinute) {
          throw refusal(
            `this workflow tree spawned ${spawns.limitPerMinute} workflows in the last minute (rate limit)`,
          );
        }
        const counts = await services.store.treeCounts(parent.id, root);
        if (counts.children >= limits.maxChildren) {
          throw refusal(
            `this workflow already has ${counts.children} child workflows (maxChildren ${limits.maxChildren})`,
          );
        }
        if (counts.descendants >= limits.maxDescendants) {
          throw refusal(
            `this workflow tree already has ${counts.descendants} descendant workflows (maxDescendants ${limits.maxDescendants})`,
          );
        }
        const planned = planWorkflow(definition, {
          tenantId: parent.tenantId,
          now: services.clock.now(),
          parent: { workflow: parent, nodeId },
        });
        journal.addWorkflow(planned);
        journal.emit(nodeId, {
          type: 'spawnRequested',
          payload: {
            node: record.name,
            requestId: planned.workflow.id,
            childWorkflowId: planned.workflow.id,
            name: requestedName,
            ...slot,
          },
        });
        journal.emit(nodeId, { type: 'treeUpdated', payload: { node: record.name } });
        // Committed inside the queue step: the next spawn of the tree counts this child.
        await journal.commit();
        spawns.record(root);
        return { workflow: planned.workflow, existing: false };
      });
    },

    find,

    run(child, signal, parentSpan) {
      return services.runChild(child, signal, parentSpan);
    },
  };
}

function refusal(message: string): AppError {
  return new AppError('LIMIT_EXCEEDED', message);
}
