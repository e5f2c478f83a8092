import { agentNameOf, type PromptNode } from '../../domain/definition.js';
import { newId } from '../../domain/ids.js';
import type { NodeRecord } from '../../domain/records.js';
import { redactValue } from '../../domain/redact.js';
import type { ReflectionEntry, ReflectionResolution } from '../../domain/reflection.js';
import { replayRevisions } from '../../reflection/policy.js';
import { promptLevelOf, reflectionBudgetOf, workflowLevelOf } from '../../reflection/settings.js';
import type { PromptInputs, Reflections, RunView } from '../node-context.js';
import { renderPromptInputs } from '../nodes/prompt/request.js';
import type { RunJournal } from './journal.js';

/**
 * A run's reflection state (docs/design.md#reflection-and-retries): which levels are on, the revised inputs of a
 * node's next
 * attempt, and the entries whose outcome (`success`) is known only once that attempt finished.
 */
export class ReflectionLedger implements Reflections {
  private readonly revised = new Map<string, PromptInputs>();
  /** Entries that asked for a new attempt of their node, not yet settled, by node id. */
  private readonly unsettled = new Map<string, string>();
  /** Entries recorded and outcomes settled by this execution (for the efficiency record). */
  readonly recorded: ReflectionEntry[] = [];
  readonly outcomes: Array<{ id: string; success: boolean }> = [];

  /** `history`: the entries persisted by earlier executions of this workflow (a resumed run). */
  constructor(
    private readonly view: RunView,
    private readonly journal: RunJournal,
    private readonly now: () => number,
    readonly history: readonly ReflectionEntry[] = [],
  ) {}

  get workflowLevel(): boolean {
    return workflowLevelOf(this.view.definition).enabled;
  }

  get maxAttempts(): number {
    return reflectionBudgetOf(this.view.definition).maxAttempts;
  }

  get retryDelayMs(): number {
    return reflectionBudgetOf(this.view.definition).retryDelayMs;
  }

  /** Prompt level: on the prompt, else its agent, else the workflow options (reflection/settings.ts). */
  promptLevel(node: PromptNode): boolean {
    return promptLevelOf(node, this.view.agent(agentNameOf(node)), this.view.definition).enabled;
  }

  revisedInputs(node: PromptNode, record: NodeRecord): PromptInputs | undefined {
    const revised = this.revised.get(record.id);
    if (revised || !this.history.some((entry) => entry.nodeId === record.id && entry.resolution.revisions)) {
      return revised;
    }
    const replayed = replayRevisions(renderPromptInputs(this.view, node), this.history, record.id);
    this.revised.set(record.id, replayed);
    return replayed;
  }

  inputs(node: PromptNode, record: NodeRecord): PromptInputs {
    return this.revisedInputs(node, record) ?? renderPromptInputs(this.view, node);
  }

  revise(nodeId: string, inputs: PromptInputs): void {
    this.revised.set(nodeId, inputs);
  }

  record(input: Parameters<Reflections['record']>[0]): string {
    const entry: ReflectionEntry = {
      id: newId('rf'),
      workflowId: this.view.workflow.id,
      tenantId: this.view.workflow.tenantId,
      nodeId: input.node.id,
      nodeName: input.node.name,
      attempt: input.attempt,
      timestamp: this.now(),
      level: input.level,
      reason: input.reason,
      error: input.error,
      // Revisions are model text (a revised system prompt, revised data): stored redacted.
      resolution: redactValue(input.resolution) as ReflectionResolution,
      success: null,
    };
    this.journal.addReflection(entry);
    this.recorded.push(entry);
    if (input.level === 'workflow' && input.resolution.decision === 'retry') {
      this.unsettled.set(input.node.id, entry.id);
    }
    this.journal.emit(input.node.id, {
      type: 'reflectionEnd',
      payload: {
        level: input.level,
        node: input.node.name,
        attempt: input.attempt,
        ...(input.nodeAttempt === undefined ? {} : { nodeAttempt: input.nodeAttempt }),
        decision: input.resolution.decision,
        success: input.decisionSuccess,
      },
    });
    return entry.id;
  }

  settle(entryId: string, success: boolean): void {
    this.journal.addReflectionOutcome(entryId, success);
    this.outcomes.push({ id: entryId, success });
  }

  /** Settles the workflow-level reflection that started this node attempt, if any. */
  settleNode(nodeId: string, success: boolean): void {
    const entryId = this.unsettled.get(nodeId);
    if (entryId === undefined) return;
    this.unsettled.delete(nodeId);
    this.settle(entryId, success);
  }
}
