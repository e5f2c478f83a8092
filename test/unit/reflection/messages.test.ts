import { describe, expect, it } from 'vitest';
import { ReflectionAdviceSchema } from '../../../src/domain/reflection.js';
import { instanceOf } from '../../../src/llm/schema-instance.js';
import {
  AGENT_REFLECTION_PREFIX,
  applyRevisions,
  PROMPT_REFLECTION_INSTRUCTION,
  parseReflectionAdvice,
  promptReflectionTurn,
  reflectionRequestMessage,
  reflectionResponseFormat,
  withAgentReflection,
} from '../../../src/reflection/policy.js';

/** The texts sent to models and the parsing of the reflection answer (src/reflection/messages.ts). */
describe('agent level', () => {
  it('uses the exact prefix and a blank line', () => {
    expect(AGENT_REFLECTION_PREFIX).toBe(
      'Before answering, reflect on your reasoning step by step. Consider alternative approaches and potential errors. Then provide your final answer.',
    );
    expect(withAgentReflection('You review code.')).toBe(`${AGENT_REFLECTION_PREFIX}\n\nYou review code.`);
    expect(withAgentReflection(undefined)).toBe(AGENT_REFLECTION_PREFIX);
    expect(withAgentReflection('')).toBe(AGENT_REFLECTION_PREFIX);
  });
});

describe('promptReflectionTurn', () => {
  it('carries the previous error, the attempt and the exact instruction', () => {
    const text = promptReflectionTurn({ code: 'VALIDATION_FAILED', message: '/severity must be "low"' }, 2);
    expect(PROMPT_REFLECTION_INSTRUCTION).toBe('Reflect on the previous error and try again.');
    expect(text).toBe(
      '{"previousError":"VALIDATION_FAILED: /severity must be \\"low\\"","attempt":2}\n\nReflect on the previous error and try again.',
    );
    const [block] = text.split('\n\n');
    expect(JSON.parse(block ?? '')).toEqual({
      previousError: 'VALIDATION_FAILED: /severity must be "low"',
      attempt: 2,
    });
  });

  it('clips a huge validator message', () => {
    const text = promptReflectionTurn({ code: 'VALIDATION_FAILED', message: 'x'.repeat(50_000) }, 3);
    expect(text.length).toBeLessThan(4_200);
    expect(text).toContain('(truncated)');
    expect(text.endsWith(PROMPT_REFLECTION_INSTRUCTION)).toBe(true);
  });
});

describe('reflectionRequestMessage', () => {
  const base = {
    nodeName: 'find-bugs',
    userMessage: 'Analyze this code\n\n<code>\n"x"\n</code>',
    error: { code: 'VALIDATION_FAILED', message: 'missing severity' },
    attempt: 1,
    maxAttempts: 3,
  };

  it('describes the failure, the inputs and the JSON contract', () => {
    const text = reflectionRequestMessage({ ...base, system: 'You review code.' });
    expect(text).toContain('The step "find-bugs" failed on attempt 1 of 3.');
    expect(text).toContain('<error>\nVALIDATION_FAILED: missing severity\n</error>');
    expect(text).toContain('<system_prompt>\nYou review code.\n</system_prompt>');
    expect(text).toContain(`<user_message>\n${base.userMessage}\n</user_message>`);
    for (const field of ['"shouldRetry"', '"reason"', '"revisedPromptData"', '"revisedSystemPrompt"']) {
      expect(text.split('\n').filter((line) => line.startsWith(`- ${field}`))).toHaveLength(1);
    }
    expect(text.endsWith('Output only the JSON object.')).toBe(true);
  });

  it('leaves the system section out when there is no system prompt', () => {
    expect(reflectionRequestMessage(base)).not.toContain('<system_prompt>');
    expect(reflectionRequestMessage({ ...base, system: '' })).not.toContain('<system_prompt>');
  });

  it('separates its sections by a blank line and opens the contract with its heading', () => {
    const sections = reflectionRequestMessage(base).split('\n\n');
    expect(sections.map((section) => section.split('\n')[0])).toEqual([
      'The step "find-bugs" failed on attempt 1 of 3. Reflect on why, and decide whether another attempt can succeed.',
      '<error>',
      '<user_message>',
      '<code>',
      'Answer with a JSON object with these fields:',
    ]);
  });

  it('asked for by hand: says a person asked, and passes the note on when there is one', () => {
    const asked = reflectionRequestMessage({ ...base, requested: { note: 'use the newer API' } });
    expect(asked).toContain(
      'The step "find-bugs" failed on attempt 1. A person asked for a reflection and one more attempt: reflect on why it failed, and revise what the next attempt is given so it can succeed.',
    );
    expect(asked).not.toContain('of 3');
    expect(asked).toContain('<person_note>\nuse the newer API\n</person_note>');
    expect(reflectionRequestMessage({ ...base, requested: { note: null } })).not.toContain('<person_note>');
  });

  it('clips an error message only past 4000 characters', () => {
    const exact = reflectionRequestMessage({
      ...base,
      error: { code: 'VALIDATION_FAILED', message: 'y'.repeat(4000) },
    });
    expect(exact).not.toContain('(truncated)');
    const over = reflectionRequestMessage({ ...base, error: { code: 'VALIDATION_FAILED', message: 'y'.repeat(4001) } });
    expect(over).toContain(`${'y'.repeat(4000)}… (truncated)`);
  });
});

describe('reflectionResponseFormat', () => {
  it('is answered by the sim provider with advice that retries without revisions', () => {
    const answer = JSON.stringify(instanceOf(reflectionResponseFormat));
    const advice = parseReflectionAdvice(answer);
    expect(advice).toBeDefined();
    expect(advice?.shouldRetry).toBe(true);
    expect(advice?.revisedPromptData).toBeUndefined();
    expect(advice?.revisedSystemPrompt).toBeUndefined();
    expect(applyRevisions({ data: { a: 1 }, system: 's' }, advice).revised).toEqual({
      promptData: false,
      systemPrompt: false,
    });
  });

  it('requires the two fields ReflectionAdvice requires', () => {
    expect(reflectionResponseFormat.required).toEqual(['shouldRetry', 'reason']);
    expect(Object.keys(reflectionResponseFormat.properties as object).sort()).toEqual(
      Object.keys(ReflectionAdviceSchema.shape).sort(),
    );
  });
});

describe('parseReflectionAdvice', () => {
  it('reads an object after prose from its first brace, and refuses a fence that holds no valid JSON', () => {
    expect(parseReflectionAdvice('x{"shouldRetry": true, "reason": "r"}')).toEqual({ shouldRetry: true, reason: 'r' });
    expect(parseReflectionAdvice('```json\n{"shouldRetry": true, "reason": "r"} and more\n```')).toBeUndefined();
  });

  const full = {
    shouldRetry: true,
    reason: 'the schema needs severity',
    revisedPromptData: { hint: 'include severity' },
    revisedSystemPrompt: 'Always include severity.',
  };

  it('parses a bare object, a ```json fence and an object wrapped in prose', () => {
    expect(parseReflectionAdvice(JSON.stringify(full))).toEqual(full);
    expect(parseReflectionAdvice(`\`\`\`json\n${JSON.stringify(full, null, 2)}\n\`\`\``)).toEqual(full);
    expect(parseReflectionAdvice(`\`\`\`\n${JSON.stringify(full)}\n\`\`\`\n`)).toEqual(full);
    expect(parseReflectionAdvice(`Here is my answer:\n${JSON.stringify(full)}\nThanks.`)).toEqual(full);
  });

  it('reads null optional fields as absent and drops unknown fields', () => {
    expect(
      parseReflectionAdvice(
        '{"shouldRetry":false,"reason":"r","revisedPromptData":null,"revisedSystemPrompt":null,"x":1}',
      ),
    ).toEqual({ shouldRetry: false, reason: 'r' });
  });

  it('is undefined for anything unusable', () => {
    for (const text of [
      '',
      'not json',
      '[1,2]',
      'null',
      '"yes"',
      '{"shouldRetry":"yes","reason":"r"}',
      '{"reason":"r"}',
      '{"shouldRetry":true}',
      JSON.stringify({ shouldRetry: true, reason: 'x'.repeat(2001) }),
      JSON.stringify({ shouldRetry: true, reason: 'r', revisedPromptData: [1] }),
      JSON.stringify({ shouldRetry: true, reason: 'r', revisedSystemPrompt: 'x'.repeat(100_001) }),
      '```json\n{"shouldRetry": true,\n```',
    ]) {
      expect(parseReflectionAdvice(text), text.slice(0, 40)).toBeUndefined();
    }
  });
});
