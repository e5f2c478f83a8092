import type { ErrorInfo } from '../domain/errors.js';
import type { JsonSchema } from '../domain/llm.js';
import { type ReflectionAdvice, ReflectionAdviceSchema } from '../domain/reflection.js';

/**
 * The texts reflection sends to models (docs/design.md#three-levels-of-reflection) and the parsing of what comes
 * back. The fixed
 * sentences are groundswell's, word for word: clients and tests key on them.
 */

/** Agent level: prepended to the system prompt, then a blank line. */
export const AGENT_REFLECTION_PREFIX =
  'Before answering, reflect on your reasoning step by step. Consider alternative approaches and potential errors. Then provide your final answer.';

/** Prompt level: the instruction that closes the user turn re-asking after a bad answer. */
export const PROMPT_REFLECTION_INSTRUCTION = 'Reflect on the previous error and try again.';

/** Long validator output says nothing more useful to the model past this; keeps the turn bounded. */
const MAX_ERROR_MESSAGE = 4000;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (truncated)`;
}

/** The system prompt of an agent with `enableReflection`: the prefix, a blank line, the original. */
export function withAgentReflection(system: string | undefined): string {
  return system === undefined || system === '' ? AGENT_REFLECTION_PREFIX : `${AGENT_REFLECTION_PREFIX}\n\n${system}`;
}

/**
 * The user turn that re-asks in the same conversation, after the bad assistant turn: a one-line JSON
 * block a model parses at a glance, a blank line, then the instruction. `attempt` is the answer that
 * failed (1 after the first answer failed), as in groundswell's retry loop; the invalidResponse and
 * reflection events and the reflection entry carry the same number (and the node's as `nodeAttempt`).
 */
export function promptReflectionTurn(previousError: ErrorInfo, attempt: number): string {
  const block = JSON.stringify({
    previousError: `${previousError.code}: ${clip(previousError.message, MAX_ERROR_MESSAGE)}`,
    attempt,
  });
  return `${block}\n\n${PROMPT_REFLECTION_INSTRUCTION}`;
}

export interface ReflectionRequestInput {
  nodeName: string;
  /** The user message the failed attempt sent (prompt text plus data blocks). */
  userMessage: string;
  /** The system prompt the failed attempt used, if any. */
  system?: string | undefined;
  error: ErrorInfo;
  /** The attempt that failed (1-based). */
  attempt: number;
  maxAttempts: number;
  /** Asked for by hand: a new attempt follows whatever the advice, and the person's note (if any) is passed on. */
  requested?: { note: string | null } | undefined;
}

/**
 * Workflow level: the user message asking the node's agent whether and how to retry. Sections are
 * tagged like the data blocks of the user message (docs/design.md#workflow-definitions) so the model can tell them
 * apart.
 */
export function reflectionRequestMessage(input: ReflectionRequestInput): string {
  const { nodeName, userMessage, system, error, attempt, maxAttempts, requested } = input;
  const sections = requested
    ? [
        `The step "${nodeName}" failed on attempt ${attempt}. A person asked for a reflection and one more attempt: reflect on why it failed, and revise what the next attempt is given so it can succeed.`,
      ]
    : [
        `The step "${nodeName}" failed on attempt ${attempt} of ${maxAttempts}. Reflect on why, and decide whether another attempt can succeed.`,
      ];
  sections.push(`<error>\n${error.code}: ${clip(error.message, MAX_ERROR_MESSAGE)}\n</error>`);
  if (requested?.note) sections.push(`<person_note>\n${clip(requested.note, MAX_ERROR_MESSAGE)}\n</person_note>`);
  if (system !== undefined && system !== '') sections.push(`<system_prompt>\n${system}\n</system_prompt>`);
  sections.push(`<user_message>\n${userMessage}\n</user_message>`);
  sections.push(
    [
      'Answer with a JSON object with these fields:',
      '- "shouldRetry": true if another attempt can succeed, false if it cannot.',
      '- "reason": why, in one or two sentences (at most 2000 characters).',
      '- "revisedPromptData" (optional): an object whose keys are added to, or replace, the data blocks of the user message on the next attempt.',
      '- "revisedSystemPrompt" (optional): a complete replacement for the system prompt on the next attempt.',
      'Output only the JSON object.',
    ].join('\n'),
  );
  return sections.join('\n\n');
}

/**
 * The JSON Schema of ReflectionAdvice, sent as the reflection call's `responseFormat`. The optional
 * fields also admit `null` (listed first): the sim provider answers the first alternative, so a
 * simulated reflection retries without inventing revisions, and real models often write `null` for
 * "no change". `parseReflectionAdvice` reads `null` as absent.
 */
export const reflectionResponseFormat: JsonSchema = {
  type: 'object',
  properties: {
    shouldRetry: { type: 'boolean' },
    reason: { type: 'string', maxLength: 2000 },
    revisedPromptData: { anyOf: [{ type: 'null' }, { type: 'object', additionalProperties: true }] },
    revisedSystemPrompt: { anyOf: [{ type: 'null' }, { type: 'string', maxLength: 100000 }] },
  },
  required: ['shouldRetry', 'reason'],
  additionalProperties: false,
};

const FENCED = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/i;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
    // Stryker disable next-line BlockStatement: an empty catch falls through to the same undefined
  } catch {
    return undefined;
  }
}

/**
 * The advice in a reflection answer, or undefined when the answer is unusable (the caller then
 * falls back, docs/design.md#reflection-and-retries). Accepts a bare object, a ```json fence, or an object wrapped in
 * prose
 * (first `{` to last `}`). `null` in an optional field means absent.
 */
export function parseReflectionAdvice(text: string): ReflectionAdvice | undefined {
  const fenced = FENCED.exec(text);
  // Stryker disable next-line MethodExpression: JSON.parse ignores the whitespace trim() removes
  let value = parseJson(fenced?.[1] ?? text.trim());
  if (value === undefined && fenced === null) {
    const start = text.indexOf('{');
    const end = text.lastIndexOf('}');
    if (start !== -1 && end > start) value = parseJson(text.slice(start, end + 1));
  }
  // Stryker disable next-line ConditionalExpression,LogicalOperator: spread, null, a number or an array fails the schema below as well
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const candidate: Record<string, unknown> = { ...value };
  if (candidate.revisedPromptData === null) delete candidate.revisedPromptData;
  if (candidate.revisedSystemPrompt === null) delete candidate.revisedSystemPrompt;
  const parsed = ReflectionAdviceSchema.safeParse(candidate);
  return parsed.success ? parsed.data : undefined;
}
