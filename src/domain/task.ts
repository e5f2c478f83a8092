import { z } from 'zod';

/**
 * What a workflow is for (docs/design.md#complexity-allocation-selection-and-review): its type, complexity and
 * loki-mode's signals.
 */

export const COMPLEXITIES = ['trivial', 'simple', 'moderate', 'complex', 'critical'] as const;
export type Complexity = (typeof COMPLEXITIES)[number];

/**
 * loki-mode's task signals (docs/design.md#complexity-allocation-selection-and-review); each has a complexity weight.
 */
export const TASK_SIGNALS = [
  'single_file',
  'few_files',
  'many_files',
  'system_wide',
  'typo_fix',
  'bug_fix',
  'feature',
  'refactor',
  'architecture',
  'documentation',
  'tests_only',
  'frontend',
  'backend',
  'full_stack',
  'infrastructure',
  'security',
] as const;
export type TaskSignal = (typeof TASK_SIGNALS)[number];

export const TaskSchema = z.strictObject({
  type: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[a-z0-9_-]+$/, { message: 'must be lowercase letters, digits, "_" or "-"' })
    .describe('Task type (e.g. code_review): metrics and rewards are averaged per type.'),
  complexity: z.enum(COMPLEXITIES).optional().describe('Overrides the complexity derived from signals or the tree.'),
  signals: z.array(z.enum(TASK_SIGNALS)).max(16).optional(),
});
export type Task = z.infer<typeof TaskSchema>;
