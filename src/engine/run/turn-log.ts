import type { WorkflowEvent } from '../../domain/events.js';
import type { LlmMessage } from '../../domain/llm.js';
import type { SpawnSlot, WorkflowStore } from '../../domain/ports.js';
import type { NodeRecord } from '../../domain/records.js';
import { redactValue } from '../../domain/redact.js';
import type { CommittedTurn, Journal, TurnLog } from '../node-context.js';

/** What dead executions left of one node's current attempt: its conversations' turns and its spawns. */
interface NodeHistory {
  turns: Map<string, CommittedTurn[]>;
  /** Child workflow id by spawn slot. */
  spawns: Map<string, string>;
}

const slotKey = (slot: SpawnSlot) => `${slot.conversation}\u0000${slot.turn}\u0000${slot.call}`;

/**
 * The committed turns of a run's tool loops. Each completed turn — the assistant
 * message, its tool calls and their results — is a `turnEnd` event committed before the next model
 * call, so it rides the journal row of that commit (one row, through the group commit, like a node
 * result). A node re-run after a crash rebuilds its conversation from those events and asks the
 * provider only from the first uncommitted turn on: at most the call in flight at the kill is sent
 * again. A spawn that replayed call makes is matched to the child a dead execution spawned at the
 * same (conversation, turn, call), whatever words the model uses this time.
 *
 * Only a resumed run reads anything: once, the events earlier executions committed, folded per node
 * from its last `stepEnd` on (an attempt that ended, failed or not, is never resumed).
 */
export class RunTurnLog implements TurnLog {
  private earlier: Promise<Map<string, NodeHistory>> | undefined;

  constructor(
    private readonly journal: Journal,
    private readonly store: Pick<WorkflowStore, 'events'>,
    private readonly workflowId: string,
    /** The last event seq earlier executions committed: 0 for a fresh run, which reads nothing. */
    private readonly startSeq: number,
  ) {}

  async resumed(record: NodeRecord, conversation: string): Promise<CommittedTurn[]> {
    const history = await this.historyOf(record);
    const turns = history?.turns.get(conversation) ?? [];
    // Taken once: a later attempt of this execution starts a conversation of its own.
    history?.turns.delete(conversation);
    return turns;
  }

  commit(record: NodeRecord, attempt: number, conversation: string, turn: CommittedTurn): Promise<void> {
    this.journal.emit(record.id, {
      type: 'turnEnd',
      payload: {
        node: record.name,
        attempt,
        conversation,
        turn: turn.turn,
        kind: turn.kind,
        // Stored like every other model and tool text baton keeps (docs/design.md#security).
        messages: redactValue(turn.messages) as LlmMessage[],
        ...(turn.reflectionId === undefined ? {} : { reflectionId: turn.reflectionId }),
        ...(turn.state === undefined ? {} : { state: turn.state }),
      },
    });
    return this.journal.commit();
  }

  /** The child a dead execution spawned at this slot of the node's attempt, each child once. */
  async earlierSpawn(record: NodeRecord, slot: SpawnSlot): Promise<string | undefined> {
    const spawns = (await this.historyOf(record))?.spawns;
    const key = slotKey(slot);
    const childId = spawns?.get(key);
    spawns?.delete(key);
    return childId;
  }

  /** The node's attempt ended in this execution: what earlier ones left no longer applies to it. */
  forget(nodeId: string): void {
    void this.earlier?.then((byNode) => byNode.delete(nodeId));
  }

  private async historyOf(record: NodeRecord): Promise<NodeHistory | undefined> {
    // A node on its first attempt has no earlier execution (turns and spawns commit after its start).
    if (this.startSeq === 0 || record.attempts <= 1) return undefined;
    this.earlier ??= this.store.events(this.workflowId, 0, this.startSeq).then(fold);
    return (await this.earlier).get(record.id);
  }
}

function fold(events: readonly WorkflowEvent[]): Map<string, NodeHistory> {
  const byNode = new Map<string, NodeHistory>();
  const historyOf = (nodeId: string) => {
    let history = byNode.get(nodeId);
    if (history === undefined) {
      history = { turns: new Map(), spawns: new Map() };
      byNode.set(nodeId, history);
    }
    return history;
  };
  for (const event of events) {
    if (event.nodeId === null) continue;
    switch (event.type) {
      case 'stepEnd':
        byNode.delete(event.nodeId);
        break;
      case 'turnEnd': {
        const { conversation, turn, kind, messages, reflectionId, state } = event.payload;
        const turns = historyOf(event.nodeId).turns;
        const list = turns.get(conversation) ?? [];
        list.push({ turn, kind, messages, reflectionId, state });
        turns.set(conversation, list);
        break;
      }
      case 'spawnRequested': {
        const { conversation, turn, call, childWorkflowId } = event.payload;
        if (conversation === undefined || turn === undefined || call === undefined) break;
        historyOf(event.nodeId).spawns.set(slotKey({ conversation, turn, call }), childWorkflowId);
        break;
      }
      default:
        break;
    }
  }
  return byNode;
}
