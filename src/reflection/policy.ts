import { AppError, type ErrorCode } from '../domain/errors.js';
import type {
  ReflectionAdvice,
  ReflectionDecision,
  ReflectionEntry,
  ReflectionResolution,
} from '../domain/reflection.js';

/**
 * Reflection policy (DESIGN §5): which failures may be reflected on, what a reflection decides,
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
 * Workflow-level reflection per error code. A table over the whole `ErrorCode` union, so a new code
 * does not compile until someone decides whether reflecting on it can help.
 *
 * `false`, and why:
 * - provider classes: the fail-fast ones (authentication, permission, quota, invalid_request) cannot
 *   be fixed by the model; the transport ones (rate_limit, overloaded, timeout, connection, server,
 *   bad_response) reach a node only after the transport retries gave up, and reflection must never
 *   spend attempts on transport problems (DESIGN §5.1).
 * - CANCELLED, SHUTTING_DOWN: the run is being stopped, not failing.
 * - LLM_CALL_LIMIT_EXCEEDED, LIMIT_EXCEEDED, OUTPUT_TOO_LARGE, WORKFLOW_TIMEOUT: a retry would only hit the limit again.
 * - MISSING_CONTEXT, UNKNOWN_MODEL, PROVIDER_NOT_CONFIGURED: the definition or the deployment is
 *   wrong (`dependency_missing`); no answer of the model changes that.
 * - INTERNAL and the request-level codes: a bug or an I/O failure of the service, not something the
 *   model's answer caused; reflecting would spend tokens for nothing.
 */
const WORKFLOW_REFLECTABLE: Record<ErrorCode, boolean> = {
  // what a better answer or another try can fix
  NODE_TIMEOUT: true,
  MAX_TURNS_EXCEEDED: true,
  INVALID_RESPONSE_FORMAT: true,
  VALIDATION_FAILED: true,
  UNKNOWN_TOOL: true,
  CHILD_WORKFLOW_FAILED: true,
  // stopping, limits, configuration
  CANCELLED: false,
  SHUTTING_DOWN: false,
  WORKFLOW_TIMEOUT: false,
  LLM_CALL_LIMIT_EXCEEDED: false,
  LIMIT_EXCEEDED: false,
  OUTPUT_TOO_LARGE: false,
  MISSING_CONTEXT: false,
  UNKNOWN_MODEL: false,
  PROVIDER_NOT_CONFIGURED: false,
  // provider classes, fail-fast and transport alike
  LLM_RATE_LIMIT: false,
  LLM_OVERLOADED: false,
  LLM_TIMEOUT: false,
  LLM_CONNECTION: false,
  LLM_SERVER_ERROR: false,
  LLM_BAD_RESPONSE: false,
  LLM_AUTHENTICATION: false,
  LLM_PERMISSION: false,
  LLM_QUOTA: false,
  LLM_INVALID_REQUEST: false,
  // the service's own failures and request-level codes
  INTERNAL: false,
  VALIDATION_ERROR: false,
  UNAUTHORIZED: false,
  NOT_FOUND: false,
  CONFLICT: false,
  NOT_TERMINAL: false,
  WORKFLOW_TERMINAL: false,
  IDEMPOTENCY_KEY_REUSED: false,
  PAYLOAD_TOO_LARGE: false,
  RATE_LIMITED: false,
  TOO_MANY_STREAMS: false,
};

/** The codes prompt-level reflection re-asks on: the answer itself was unusable. */
const PROMPT_REFLECTABLE: ReadonlySet<string> = new Set<ErrorCode>(['INVALID_RESPONSE_FORMAT', 'VALIDATION_FAILED']);

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

/** Whether a failed node may get a workflow-level reflection (DESIGN §5.2). */
export function isReflectable(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && Object.hasOwn(WORKFLOW_REFLECTABLE, code) && WORKFLOW_REFLECTABLE[code as ErrorCode];
}

/** Whether a prompt may be re-asked in the same conversation: bad JSON or a schema miss only. */
export function isPromptReflectable(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && PROMPT_REFLECTABLE.has(code);
}

export interface DecideInput {
  /** The parsed advice; absent when the reflection call failed or its answer was unusable. */
  advice?: ReflectionAdvice | undefined;
  /** The attempt that failed (1-based). */
  attempt: number;
  /** Total attempts allowed, the first included (DESIGN §5: 1–3, default 3). */
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
 * within that, the advice decides, and without advice the fallback heuristic retries (DESIGN §5).
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
    const advice: ReflectionAdvice = { shouldRetry: true, reason: entry.reason };
    if (revisions.promptData !== undefined) advice.revisedPromptData = revisions.promptData;
    if (revisions.systemPrompt !== undefined) advice.revisedSystemPrompt = revisions.systemPrompt;
    const applied = applyRevisions(current, advice);
    current = { data: applied.data, system: applied.system };
  }
  return current;
}
