import { z } from 'zod';

/**
 * The retrieval loop's words to the model (docs/design.md#agent-tools, waggle-os): the json-actions contract for
 * models without tool calling, the budget lines both modes share, the turns the loop adds
 * (results, correction, guard, forced answer) and the string-aware scanner that reads an action
 * out of an answer. Pure text in, text out: the engine decides when each turn is sent.
 */

/** The waggle-os contract, byte for byte (its audit rates it Tier 0: model-portable). */
export const MULTI_STEP_ACTION_CONTRACT = `Output exactly ONE JSON object on its own line, no prose, no code fences:
  - To retrieve information: {"action": "retrieve", "query": "<your search query>"}
  - To finalize your answer:  {"action": "finalize", "response": "<your full final answer>"}`;

/** The budget lines of both modes: what the model is told about its turns and its retrievals. */
export function budgetLines(maxSteps: number, maxChunks: number): string {
  return [
    `You have a maximum of ${maxSteps} turns. Plan accordingly.`,
    `Each retrieval returns up to ${maxChunks} most relevant document chunks.`,
    'A good retrieval query is 5-15 words and targets specific information.',
  ].join('\n');
}

/** The system prompt's retrieval part, appended to the agent's own instructions. */
export function retrievalInstructions(
  mode: 'tools' | 'json-actions',
  maxSteps: number,
  maxChunks: number,
  /** The prompt's responseFormat: the final answer is then a JSON value of this schema, not prose. */
  answerSchema?: unknown,
): string {
  const how =
    mode === 'json-actions'
      ? MULTI_STEP_ACTION_CONTRACT
      : answerSchema === undefined
        ? 'Use the retrieve tool to search the corpus; when you have what you need, answer in plain prose.'
        : 'Use the retrieve tool to search the corpus; when you have what you need, give your final answer.';
  const parts = [how, budgetLines(maxSteps, maxChunks)];
  if (answerSchema !== undefined) {
    const where =
      mode === 'json-actions' ? 'The "response" of your finalize action is a string holding' : 'Your final answer is';
    parts.push(
      `${where} only a JSON value (no prose, no code fences) that satisfies this JSON Schema:\n${JSON.stringify(answerSchema)}`,
    );
  }
  return parts.join('\n\n');
}

/** A chunk as the loop shows it to the model. */
export interface ResultChunk {
  title: string | null;
  text: string;
}

/**
 * The turn that carries one retrieval's results. Chunk text is data: `&`, `<` and `>` are escaped
 * so no document can close the element or open one that looks like ours.
 */
export function retrievalResultsTurn(query: string, chunks: readonly ResultChunk[]): string {
  const body = chunks.map((c, i) => `[${i + 1}]${c.title ? ` ${escapeText(c.title)}\n` : ' '}${escapeText(c.text)}`);
  const open = `<retrieval_results query="${escapeAttribute(query)}" count="${chunks.length}">`;
  return [open, ...body, '</retrieval_results>'].join('\n');
}

/** The one corrective turn a malformed action gets. */
export function correctiveTurn(problem: string): string {
  return `Your last message was not a valid action (${problem}).\n${MULTI_STEP_ACTION_CONTRACT}`;
}

/** The engagement guard's refusal of an early finalize (docs/design.md#agent-tools, exact words). */
export function guardTurn(retrievals: number, minCalls: number, turnsLeft: number): string {
  return `You finalized after ${retrievals} retrievals; at least ${minCalls} are expected. You have ${turnsLeft} turns left.`;
}

/** The one extra turn when the budget ran out without a finalize. */
export function forcedAnswerTurn(maxSteps: number): string {
  return (
    `You have used all ${maxSteps} turns. Write your full final answer now, in plain prose: ` +
    'no JSON, no code fences, no further retrievals.'
  );
}

const ActionSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('retrieve'), query: z.string().trim().min(1).max(1_000) }),
  z.object({ action: z.literal('finalize'), response: z.string() }),
]);
export type Action = z.infer<typeof ActionSchema>;

export type ScannedAction = { ok: true; action: Action } | { ok: false; problem: string };

/**
 * The first JSON object in `text` that is a valid action. Objects are delimited by a scanner that
 * knows JSON strings (a `}` or `{` inside `"response"` is text, `\"` does not end a string), so
 * a response holding code is read whole; prose or code fences around the object are ignored.
 */
export function scanAction(text: string): ScannedAction {
  let sawObject = false;
  let problem = 'no JSON object found';
  let candidates = 0;
  for (let start = text.indexOf('{'); start !== -1; start = text.indexOf('{', start + 1)) {
    // Each candidate may scan to the end: a bounded number keeps a hostile answer linear.
    if (++candidates > MAX_CANDIDATES) break;
    const end = objectEnd(text, start);
    if (end === -1) continue;
    let value: unknown;
    try {
      value = JSON.parse(text.slice(start, end + 1));
    } catch {
      continue;
    }
    sawObject = true;
    const parsed = ActionSchema.safeParse(value);
    if (parsed.success) return { ok: true, action: parsed.data };
    problem = describe(value);
    // An object that is an action in everything but its fields is the one the model meant.
    if (value !== null && typeof value === 'object' && 'action' in value) return { ok: false, problem };
    // Otherwise keep looking: the action may come after a JSON example in prose.
    start = end;
  }
  return { ok: false, problem: sawObject ? problem : 'no JSON object found' };
}

/** Objects tried per answer: an action comes first, or after a few examples in prose. */
const MAX_CANDIDATES = 32;

/** The index of the `}` that closes the object opening at `start`, or -1. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c /* \ */) i++;
      else if (ch === 0x22 /* " */) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x7b /* { */) depth++;
    else if (ch === 0x7d /* } */ && --depth === 0) return i;
  }
  return -1;
}

function describe(value: unknown): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'the JSON is not an object';
  const action = (value as { action?: unknown }).action;
  if (action === undefined) return 'the object has no "action"';
  if (action === 'retrieve') return '"retrieve" needs a non-empty "query" string';
  if (action === 'finalize') return '"finalize" needs a "response" string';
  return `unknown action ${JSON.stringify(action).slice(0, 50)}: use "retrieve" or "finalize"`;
}

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttribute(text: string): string {
  return escapeText(text)
    .replace(/"/g, '&quot;')
    .replace(/[\r\n]+/g, ' ');
}
