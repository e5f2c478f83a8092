import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/domain/errors.js';
import { MISSING, refsIn, renderText, renderValue, type TemplateScope } from '../../../src/domain/templates.js';
import { buildUserMessage } from '../../../src/engine/nodes/user-message.js';

const scope: TemplateScope = {
  input: { code: 'x = 1', nested: { list: [10, 20] } },
  stepOutput: (name) => (name === 'find-bugs' ? { bugs: ['b1'], severity: 'low' } : MISSING),
};

describe('templates', () => {
  it('parses input and step references', () => {
    expect(refsIn('a {{input.code}} b {{ steps.find-bugs.output.bugs }} {{nope}}')).toEqual([
      { kind: 'input', path: ['code'], raw: 'input.code' },
      { kind: 'step', step: 'find-bugs', path: ['bugs'], raw: 'steps.find-bugs.output.bugs' },
      { kind: 'invalid', raw: 'nope' },
    ]);
  });

  it('keeps JSON types when a string is exactly one template', () => {
    expect(renderValue({ a: '{{input.nested.list}}', b: ['{{steps.find-bugs.output}}'] }, scope)).toEqual({
      a: [10, 20],
      b: [{ bugs: ['b1'], severity: 'low' }],
    });
  });

  it('interpolates inside text, objects as JSON', () => {
    expect(renderText('fix {{steps.find-bugs.output}} in {{input.code}}; first {{input.nested.list.0}}', scope)).toBe(
      'fix {"bugs":["b1"],"severity":"low"} in x = 1; first 10',
    );
  });

  it('fails with MISSING_CONTEXT for anything unavailable', () => {
    for (const text of ['{{input.absent}}', '{{steps.later.output}}', 'x {{steps.find-bugs.output.nope}}']) {
      expect(() => renderText(text, scope)).toThrowError(AppError);
      try {
        renderText(text, scope);
      } catch (err) {
        expect((err as AppError).code).toBe('MISSING_CONTEXT');
      }
    }
  });

  it('does not mutate the rendered value', () => {
    const data = { a: '{{input.code}}' };
    renderValue(data, scope);
    expect(data).toEqual({ a: '{{input.code}}' });
  });
});

describe('buildUserMessage', () => {
  it('follows the groundswell layout', () => {
    expect(buildUserMessage('Analyze', { code: 'x', meta: { a: 1 } })).toBe(
      'Analyze\n\n<code>\n"x"\n</code>\n\n<meta>\n{\n  "a": 1\n}\n</meta>',
    );
    expect(buildUserMessage('Only text', undefined)).toBe('Only text');
  });
});
