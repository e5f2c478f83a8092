import { agentNamed, DEFAULTS, type PromptNode } from '../domain/definition.js';
import type { ErrorInfo } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { NodeRecord } from '../domain/records.js';
import { redactValue } from '../domain/redact.js';
import type { ReflectionEntry, ReflectionLevel, ReflectionResolution } from '../domain/reflection.js';
import { replayRevisions } from '../reflection/policy.js';
import { agentOf, type PromptInputs, renderPromptInputs } from './prompt-request.js';
import type { Run } from './run.js';

/**
 * A run's reflection state (DESIGN §5): which levels are on, the revised inputs of a node's next
 * attempt, and the entries whose outcome (`success`) is known only once that attempt finished.
 */
export class ReflectionLedger {
  private readonly revised = new Map<string, PromptInputs>();
  /** Entries that asked for a new attempt of their node, not yet settled, by node id. */
  private readonly unsettled = new Map<string, string>();
  /** Entries recorded and outcomes settled by this execution (for the efficiency record). */
  readonly recorded: ReflectionEntry[] = [];
  readonly outcomes: Array<{ id: string; success: boolean }> = [];

  /** `history`: the entries persisted by earlier executions of this workflow (a resumed run). */
  constructor(
    private readonly run: Run,
    readonly history: readonly ReflectionEntry[] = [],
  ) {}

  get workflowLevel(): boolean {
    return this.run.definition.options?.reflection?.enabled === true;
  }

  get maxAttempts(): number {
    return this.run.definition.options?.reflection?.maxAttempts ?? DEFAULTS.reflection.maxAttempts;
  }

  get retryDelayMs(): number {
    return this.run.definition.options?.reflection?.retryDelayMs ?? DEFAULTS.reflection.retryDelayMs;
  }

  /** Prompt level: on the prompt, else its agent, else the workflow options. */
  promptLevel(node: PromptNode): boolean {
    return node.enableReflection ?? agentNamed(this.run.agents, node.agent)?.enableReflection ?? this.workflowLevel;
  }

  /** Revised inputs for the node's next attempt, re-applied from the history after a restart. */
  revisedInputs(node: PromptNode, record: NodeRecord): PromptInputs | undefined {
    const revised = this.revised.get(record.id);
    if (revised || !this.history.some((entry) => entry.nodeId === record.id && entry.resolution.revisions)) {
      return revised;
    }
    const replayed = replayRevisions(
      renderPromptInputs(this.run, node, agentOf(this.run, node)),
      this.history,
      record.id,
    );
    this.revised.set(record.id, replayed);
    return replayed;
  }

  /** The inputs the node's next attempt renders with: revised by a reflection, else from its definition. */
  inputs(node: PromptNode, record: NodeRecord): PromptInputs {
    return this.revisedInputs(node, record) ?? renderPromptInputs(this.run, node, agentOf(this.run, node));
  }

  revise(nodeId: string, inputs: PromptInputs): void {
    this.revised.set(nodeId, inputs);
  }

  /** Persists a reflection with the run's next commit and emits reflectionEnd; returns the entry id. */
  record(input: {
    node: NodeRecord;
    /** The attempt reflected on: a node attempt (workflow level) or an answer (prompt level). */
    attempt: number;
    /** Prompt level: the node attempt the answers belong to. */
    nodeAttempt?: number;
    level: ReflectionLevel;
    reason: string;
    error: ErrorInfo;
    resolution: ReflectionResolution;
    /** Whether the reflection produced a usable decision (reflectionEnd.success). */
    decisionSuccess: boolean;
  }): string {
    const entry: ReflectionEntry = {
      id: newId('rf'),
      workflowId: this.run.workflow.id,
      tenantId: this.run.workflow.tenantId,
      nodeId: input.node.id,
      nodeName: input.node.name,
      attempt: input.attempt,
      timestamp: this.run.services.clock.now(),
      level: input.level,
      reason: input.reason,
      error: input.error,
      // Revisions are model text (a revised system prompt, revised data): stored redacted.
      resolution: redactValue(input.resolution) as ReflectionResolution,
      success: null,
    };
    this.run.changes.addReflection(entry);
    this.recorded.push(entry);
    if (input.level === 'workflow' && input.resolution.decision === 'retry')
      this.unsettled.set(input.node.id, entry.id);
    this.run.emit('reflectionEnd', input.node.id, {
      level: input.level,
      node: input.node.name,
      attempt: input.attempt,
      ...(input.nodeAttempt === undefined ? {} : { nodeAttempt: input.nodeAttempt }),
      decision: input.resolution.decision,
      success: input.decisionSuccess,
    });
    return entry.id;
  }

  /** Records whether the attempt (or answer) that followed a reflection succeeded. */
  settle(entryId: string, success: boolean): void {
    this.run.changes.addReflectionOutcome(entryId, success);
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
