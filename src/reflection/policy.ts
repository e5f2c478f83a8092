import { AppError, meaningOf } from '../domain/errors.js';
import type {
  ReflectionAdvice,
  ReflectionDecision,
  ReflectionEntry,
  ReflectionResolution,
} from '../domain/reflection.js';

/**
 * Reflection policy (docs/design.md#reflection-and-retries): which failures may be reflected on, what a reflection
 * decides,
 * and how its revisions change the next attempt. Pure: no I/O, no clock, no model calls — the
 * engine makes the calls and persists the entries. The texts sent to models are in messages.ts.
 */

export {
  AGENT_REFLECTION_PREFIX,
  PROMPT_REFLECTION_INSTRUCTION,
  parseReflectionAdvice,
  promptReflectionTurn,
  reflectionRequestMessage,
  reflectionResponseFormat,
  withAgentReflection,
} from './messages.js';

/**
 * The code of an `AppError` (a `ProviderError` included) or of a stored `ErrorInfo`. Anything else
 * (a plain Error, a DOMException) is a bug or an I/O failure and has no code.
 */
function codeOf(error: unknown): string | undefined {
  if (error instanceof AppError) return error.code;
  if (typeof error === 'object' && error !== null && !(error instanceof Error)) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/**
 * Whether a failed node may get a workflow-level reflection (docs/design.md#three-levels-of-reflection): what
 * ERROR_CODES says. Not
 * the transport classes (they reach a node only after the retry layer gave up; reflection never
 * spends attempts on transport problems), the fail-fast provider classes, stopping, limits, a
 * broken definition or deployment, or the service's own failures.
 */
export function isReflectable(error: unknown): boolean {
  const code = codeOf(error);
  // Stryker disable next-line ConditionalExpression: meaningOf reads a missing code as INTERNAL, which is not reflectable
  return code !== undefined && meaningOf(code).reflectable;
}

/** Whether a prompt may be re-asked in the same conversation: bad JSON or a schema miss only. */
export function isPromptReflectable(error: unknown): boolean {
  const code = codeOf(error);
  // Stryker disable next-line ConditionalExpression: meaningOf reads a missing code as INTERNAL, which is never re-asked
  return code !== undefined && meaningOf(code).reAsk === true;
}

export interface DecideInput {
  /** The parsed advice; absent when the reflection call failed or its answer was unusable. */
  advice?: ReflectionAdvice | undefined;
  /** The attempt that failed (1-based). */
  attempt: number;
  /** Total attempts allowed, the first included (docs/design.md#reflection-and-retries: 1–3, default 3). */
  maxAttempts: number;
  /** An optional node that will not be retried is skipped (the workflow goes on), not aborted. */
  optional?: boolean;
}

export interface Decision {
  decision: ReflectionDecision;
  reason: string;
  /** The reflection produced a usable decision (`reflectionEnd.success`); false on the fallback. */
  success: boolean;
}

/**
 * What a workflow-level reflection decides. A retry happens only while `attempt < maxAttempts`;
 * within that, the advice decides, and without advice the fallback heuristic retries
 * (docs/design.md#reflection-and-retries).
 */
export function decide(input: DecideInput): Decision {
  const { advice, attempt, maxAttempts } = input;
  const giveUp: ReflectionDecision = input.optional ? 'skip' : 'abort';
  const success = advice !== undefined;
  if (attempt >= maxAttempts) {
    const exhausted = `attempt ${attempt} of ${maxAttempts} failed and no attempts are left`;
    return { decision: giveUp, reason: advice ? `${exhausted}: ${advice.reason}` : exhausted, success };
  }
  if (advice) return { decision: advice.shouldRetry ? 'retry' : giveUp, reason: advice.reason, success };
  return {
    decision: 'retry',
    reason: `the reflection produced no usable advice; retrying by the fallback rule (attempt ${attempt} of ${maxAttempts} failed)`,
    success: false,
  };
}

export interface RevisableInput {
  /** The prompt's rendered `data`. */
  data?: Record<string, unknown> | undefined;
  /** The agent's rendered system prompt, before the agent-reflection prefix and the responseFormat instruction. */
  system?: string | undefined;
}

export interface AppliedRevisions {
  data: Record<string, unknown> | undefined;
  system: string | undefined;
  revised: { promptData: boolean; systemPrompt: boolean };
  /** What was applied, for `ReflectionEntry.resolution.revisions`; undefined when nothing was. */
  revisions: ReflectionResolution['revisions'];
}

/**
 * The next attempt's inputs: `revisedPromptData` is shallow-merged over `data` (its keys added or
 * replaced), `revisedSystemPrompt` replaces the system prompt. An empty object, a blank or an
 * unchanged system prompt is no revision. The inputs are never mutated.
 */
export function applyRevisions(input: RevisableInput, advice?: ReflectionAdvice): AppliedRevisions {
  const promptData = advice?.revisedPromptData;
  const systemPrompt = advice?.revisedSystemPrompt;
  const revisePromptData = promptData !== undefined && Object.keys(promptData).length > 0;
  const reviseSystemPrompt = systemPrompt !== undefined && systemPrompt.trim() !== '' && systemPrompt !== input.system;

  let revisions: ReflectionResolution['revisions'];
  if (revisePromptData || reviseSystemPrompt) {
    revisions = {};
    if (revisePromptData) revisions.promptData = promptData;
    if (reviseSystemPrompt) revisions.systemPrompt = systemPrompt;
  }
  return {
    // Spread, not Object.assign: a model-supplied "__proto__" key stays a plain own key.
    data: revisePromptData ? { ...input.data, ...promptData } : input.data,
    system: reviseSystemPrompt ? systemPrompt : input.system,
    revised: { promptData: revisePromptData, systemPrompt: reviseSystemPrompt },
    revisions,
  };
}

/** The persisted resolution: the decision, plus the revision flags and content when a retry applied some. */
export function resolutionOf(decision: ReflectionDecision, applied?: AppliedRevisions): ReflectionResolution {
  const resolution: ReflectionResolution = { decision };
  if (decision !== 'retry' || applied?.revisions === undefined) return resolution;
  if (applied.revised.promptData) resolution.revisedPromptData = true;
  if (applied.revised.systemPrompt) resolution.revisedSystemPrompt = true;
  resolution.revisions = applied.revisions;
  return resolution;
}

/**
 * Re-applies, in order, the revisions that earlier retries of one node ran with — for a run resumed
 * after a crash, whose retry must see the same revised inputs as before. `entries` oldest first, as
 * `WorkflowStore.reflections` returns them.
 */
export function replayRevisions(
  input: RevisableInput,
  entries: readonly ReflectionEntry[],
  nodeId: string,
): { data: Record<string, unknown> | undefined; system: string | undefined } {
  let current = { data: input.data, system: input.system };
  for (const entry of entries) {
    const revisions = entry.resolution.revisions;
    if (entry.nodeId !== nodeId || entry.resolution.decision !== 'retry' || revisions === undefined) continue;
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: applyRevisions reads only the revisions, never shouldRetry or reason
    const advice: ReflectionAdvice = { shouldRetry: true, reason: entry.reason };
    // Stryker disable next-line ConditionalExpression: an undefined revisedPromptData is no revision either way
    if (revisions.promptData !== undefined) advice.revisedPromptData = revisions.promptData;
    // Stryker disable next-line ConditionalExpression: an undefined revisedSystemPrompt is no revision either way
    if (revisions.systemPrompt !== undefined) advice.revisedSystemPrompt = revisions.systemPrompt;
    const applied = applyRevisions(current, advice);
    current = { data: applied.data, system: applied.system };
  }
  return current;
}
