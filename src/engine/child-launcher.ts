import type { WorkflowDefinition } from '../domain/definition.js';
import { AppError } from '../domain/errors.js';
import type { ChildLauncher } from '../domain/ports.js';
import type { NodeRecord, WorkflowRecord } from '../domain/records.js';
import type { RunJournal } from './journal.js';
import type { RunView } from './node-context.js';
import { planWorkflow } from './plan.js';
import type { EngineServices } from './services.js';

/**
 * The ChildLauncher of one run: plans the child's rows, records them with the parent's node patch
 * and its childAttached/treeUpdated events in one commit (so a crash finds the child, never a
 * second one), and runs it through the executor under the parent's signal.
 */
export function createChildLauncher(
  view: RunView,
  records: ReadonlyMap<string, NodeRecord>,
  journal: RunJournal,
  services: Pick<EngineServices, 'store' | 'clock' | 'runChild' | 'spawns'>,
): ChildLauncher {
  /** Children this execution spawned: never "found again" by it. */
  const spawnedHere = new Set<string>();
  /** Per node, the children dead executions spawned under it and this one has not found yet. */
  const spawnedBefore = new Map<string, WorkflowRecord[]>();

  async function earlierSpawns(record: NodeRecord): Promise<WorkflowRecord[]> {
    // A node on its first attempt has no earlier execution (its spawns commit with its attempt count).
    if (record.attempts <= 1) return [];
    let found = spawnedBefore.get(record.id);
    if (found === undefined) {
      found = [];
      const parent = view.workflow;
      for (let cursor: string | null = null; ; ) {
        const page = await services.store.list(parent.tenantId, { parentWorkflowId: parent.id }, cursor, 100);
        found.push(...page.items.filter((child) => child.parentNodeId === record.id && !spawnedHere.has(child.id)));
        cursor = page.nextCursor;
        if (cursor === null) break;
      }
      spawnedBefore.set(record.id, found);
    }
    return found;
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

    spawn({ nodeId, definition, requestedName }) {
      const parent = view.workflow;
      const root = parent.rootWorkflowId;
      const { limits } = view;
      const { spawns } = services;
      return spawns.serialize(root, async () => {
        const record = records.get(nodeId);
        if (!record) throw new AppError('INTERNAL', `node ${nodeId} has no record`);
        // Re-run after a crash, the node asks its model again; the same request finds the child
        // the dead execution spawned instead of starting a second (DESIGN §4 allows one duplicate
        // call per in-flight node, not a duplicate child).
        const earlier = await earlierSpawns(record);
        const same = earlier.findIndex((child) => sameRequest(child.definition, definition));
        if (same >= 0) return { workflow: earlier.splice(same, 1)[0] as WorkflowRecord, existing: true };
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
          },
        });
        journal.emit(nodeId, { type: 'treeUpdated', payload: { node: record.name } });
        // Committed inside the queue step: the next spawn of the tree counts this child.
        spawnedHere.add(planned.workflow.id);
        await journal.commit();
        spawns.record(root);
        return { workflow: planned.workflow, existing: false };
      });
    },

    async find(childId) {
      const child: WorkflowRecord | undefined = await services.store.getById(childId);
      if (!child) throw new AppError('INTERNAL', `child workflow ${childId} has no row`);
      return child;
    },

    run(child, signal, parentSpan) {
      return services.runChild(child, signal, parentSpan);
    },
  };
}

/** A spawn request is its child's name and input (the rest of the definition follows from the node). */
function sameRequest(stored: WorkflowDefinition, asked: WorkflowDefinition): boolean {
  return stored.name === asked.name && JSON.stringify(stored.input) === JSON.stringify(asked.input);
}

function refusal(message: string): AppError {
  return new AppError('LIMIT_EXCEEDED', message);
}
