import { z } from 'zod';
import { NODE_TYPES, REVIEW_MODES } from './definition.js';
import { ErrorInfoSchema } from './errors.js';
import { CHECKPOINT_STATES } from './records.js';
import { REVIEW_DECISIONS, ReviewerVerdictSchema } from './review.js';
import { STATUSES } from './status.js';
import { COMPLEXITIES } from './task.js';

/**
 * Workflow events (docs/design.md#events-spans-metrics-and-rewards): groundswell's names, persisted with a
 * per-workflow monotonic `seq`
 * and streamed over SSE with `id: <seq>`. The event log is the record SSE, metrics, rewards and
 * Prometheus are derived from, so every type has one zod schema: events are built as typed bodies
 * (`{ type, payload }`, checked by the compiler) and parsed by the same schemas on the way out of the
 * store, so readers switch on `type` and get typed payloads, never casts.
 */

const node = z.string().describe('The node name.');
const attempt = z.int().min(0).describe('The node attempt (1-based).');
const TokenUsageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadTokens: z.number().optional(),
  cacheWriteTokens: z.number().optional(),
});
const call = {
  node,
  agent: z.string(),
  model: z.string().describe('provider/model'),
  simulated: z.boolean().describe('A sim/* model: its figures are what the call would have cost.'),
  attempt,
  turn: z.int().min(1),
  purpose: z.string().optional().describe('What the call is for when it is not the prompt itself (reflection).'),
};
const reflectionLevel = z.enum(['prompt', 'agent', 'workflow']);
/** What closed a turn: tool results, a response-format re-ask, a json-actions correction, a guard refusal, results of an action. */
export const TURN_KINDS = ['tool', 'reask', 'corrective', 'guard', 'action'] as const;
const StoredBlockSchema = z.union([
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) }),
  z.object({
    type: z.literal('tool_result'),
    tool_use_id: z.string(),
    content: z.string(),
    is_error: z.boolean().optional(),
  }),
]);
const StoredMessageSchema = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(StoredBlockSchema)]),
});

export const EVENT_SCHEMAS = {
  workflowStart: z.object({ name: z.string(), parentWorkflowId: z.string().nullable() }),
  workflowEnd: z.object({ status: z.enum(STATUSES), durationMs: z.number(), error: ErrorInfoSchema.optional() }),
  stepStart: z.object({ node, type: z.enum(NODE_TYPES), attempt }),
  stepEnd: z.object({
    node,
    status: z.enum(STATUSES),
    attempt,
    durationMs: z.number(),
    error: ErrorInfoSchema.optional(),
    retry: z.boolean().optional().describe('A workflow-level reflection decided to run the node again.'),
  }),
  error: ErrorInfoSchema.extend({ node, attempt }),
  invalidResponse: ErrorInfoSchema.extend({
    node,
    attempt: z.int().min(1).describe('The answer that broke the responseFormat.'),
    nodeAttempt: attempt,
  }),
  treeUpdated: z.object({ node }),
  childAttached: z.object({ node, childWorkflowId: z.string(), name: z.string() }),
  agentPromptStart: z.object({ ...call, prompt: z.string().optional().describe('The rendered user message, turn 1.') }),
  agentPromptEnd: z.object({
    ...call,
    duration: z.number().describe('ms, transport retries and their waits included.'),
    requests: z.int().min(0).describe('Requests sent for this call, every attempt.'),
    tokenUsage: TokenUsageSchema.optional(),
    costUsd: z.number().optional(),
    stopReason: z.string().optional(),
    error: ErrorInfoSchema.optional().describe('The call ended without an answer.'),
  }),
  toolInvocation: z.object({
    node,
    toolName: z.string(),
    input: z.unknown(),
    output: z.unknown(),
    isError: z.boolean(),
    duration: z.number(),
  }),
  retry: z.object({
    node,
    reason: z.enum(['rate_limit', 'timeout']),
    delayMs: z.number(),
    attempt: z.int().min(1).describe('The transport attempt that failed.'),
    code: z.string(),
    message: z.string(),
  }),
  reflectionStart: z.object({
    level: reflectionLevel,
    node,
    attempt,
    nodeAttempt: attempt.optional(),
    requested: z.boolean().optional().describe('true when a person asked for it (POST …/nodes/{nodeId}/reflect).'),
  }),
  reflectionEnd: z.object({
    level: reflectionLevel,
    node,
    attempt,
    nodeAttempt: attempt.optional(),
    decision: z.enum(['retry', 'skip', 'abort']),
    success: z.boolean(),
  }),
  cacheHit: z.object({
    key: z.string(),
    node,
    model: z.string(),
    tokenUsage: TokenUsageSchema.describe('What the original call spent: saved by this hit.'),
    costSavedUsd: z.number(),
    simulated: z.boolean().optional(),
    collapsed: z.boolean().optional().describe('Waited on an identical call in flight.'),
  }),
  cacheMiss: z.object({ key: z.string(), node }),
  spawnRequested: z.object({
    node,
    requestId: z.string(),
    childWorkflowId: z.string(),
    name: z.string().describe('The name the agent gave the spawned workflow.'),
    conversation: z.string().optional().describe('The conversation of the node that asked (see turnEnd).'),
    turn: z.int().min(1).optional().describe('The turn that asked: a replayed turn finds its child by it.'),
    call: z.int().min(0).optional().describe('The tool call of that turn (0-based).'),
  }),
  turnEnd: z
    .object({
      node,
      attempt,
      conversation: z.string().describe('Which conversation of the node: `prompt`, or a reviewer seat.'),
      turn: z.int().min(1).describe('The model call the turn answered.'),
      kind: z.enum(TURN_KINDS),
      messages: z.array(StoredMessageSchema).describe('What the turn added to the conversation (redacted).'),
      reflectionId: z.string().optional().describe('The prompt-level reflection a re-ask recorded.'),
      state: z.record(z.string(), z.unknown()).optional().describe('Loop counters a resumed loop starts from.'),
    })
    .describe(
      'A completed turn of a tool loop, committed before the next call: a resumed node starts after the last one.',
    ),
  guardIntervention: z.object({
    node,
    agent: z.string(),
    model: z.string(),
    retrievals: z.int().min(0).describe('Retrievals made when the model tried to finalize.'),
    minCalls: z.int().min(1),
    turnsLeft: z.int().min(0),
    auto: z.boolean().describe('Applied by `guard.auto`: the model under-engages on this task type.'),
  }),
  retrievalEnd: z.object({
    node,
    agent: z.string(),
    model: z.string(),
    mode: z.enum(['tools', 'json-actions']),
    retrievalCalls: z.int().min(0),
    steps: z.int().min(0),
    loopExhausted: z.boolean(),
    haltReason: z.enum(['finalized', 'budget_exhausted', 'error']),
    relevant: z
      .boolean()
      .nullable()
      .describe(
        'memory_retrieval_relevant: a retrieved chunk shares 3+ content words with the answer; null: nothing retrieved.',
      ),
  }),
  reviewVerdict: ReviewerVerdictSchema.extend({
    node,
    attempt,
    agent: z.string(),
    model: z.string().describe('provider/model'),
  }).describe("One reviewer's verdict (docs/design.md#complexity-allocation-selection-and-review)."),
  reviewEnd: z
    .object({
      node,
      attempt,
      mode: z.enum(REVIEW_MODES),
      decision: z.enum(REVIEW_DECISIONS),
      approvals: z.int().min(0).describe("Counted votes of the deciding round (the devil's advocate's is not)."),
      rejections: z.int().min(0),
    })
    .describe('What a review node decided; the efficiency record reads its outcome from it.'),
  // A human checkpoint (docs/design.md#complexity-allocation-selection-and-review): the workflow waits, then is
  // approved or rejected.
  checkpoint: z.object({
    state: z.enum(CHECKPOINT_STATES),
    complexity: z.enum(COMPLEXITIES),
    reason: z.string().nullable().describe('Why it waits (pending), or what the person said.'),
  }),
} as const;

export type EventType = keyof typeof EVENT_SCHEMAS;
export const EVENT_TYPES = Object.keys(EVENT_SCHEMAS) as [EventType, ...EventType[]];
export type EventPayloads = { [K in EventType]: z.infer<(typeof EVENT_SCHEMAS)[K]> };
export type EventPayload<K extends EventType> = EventPayloads[K];

const body = <K extends EventType>(type: K) => z.object({ type: z.literal(type), payload: EVENT_SCHEMAS[type] });

/** What an event says, its type and that type's payload, as a schema: stored rows are parsed, not trusted. */
export const EventBodySchema = z.discriminatedUnion('type', [
  body('workflowStart'),
  body('workflowEnd'),
  body('stepStart'),
  body('stepEnd'),
  body('error'),
  body('invalidResponse'),
  body('treeUpdated'),
  body('childAttached'),
  body('agentPromptStart'),
  body('agentPromptEnd'),
  body('toolInvocation'),
  body('retry'),
  body('reflectionStart'),
  body('reflectionEnd'),
  body('cacheHit'),
  body('cacheMiss'),
  body('spawnRequested'),
  body('guardIntervention'),
  body('retrievalEnd'),
  body('reviewVerdict'),
  body('reviewEnd'),
  body('checkpoint'),
  body('turnEnd'),
]);

/** The type and payload pair of an event (the compiler checks that they go together). */
export type EventBody = z.infer<typeof EventBodySchema>;

// Every event type is a member of the union above: a new type does not compile until it is listed.
type Missing = Exclude<EventType, EventBody['type']>;
export const EVERY_TYPE_LISTED: Missing extends never ? true : Missing = true;

export interface EventEnvelope {
  workflowId: string;
  tenantId: string;
  seq: number;
  nodeId: string | null;
  /** Epoch milliseconds. */
  at: number;
}

export type WorkflowEvent = EventEnvelope & EventBody;

const payloadTexts = new WeakMap<WorkflowEvent, string>();

/**
 * `JSON.stringify(event.payload)`, computed once per event: the journal stores it and every SSE
 * stream of the workflow sends it, so an event is serialised once however many read it live.
 * Events are not changed after they are emitted, which is what makes the memo safe.
 */
export function payloadJson(event: WorkflowEvent): string {
  let text = payloadTexts.get(event);
  if (text === undefined) {
    text = JSON.stringify(event.payload);
    payloadTexts.set(event, text);
  }
  return text;
}
