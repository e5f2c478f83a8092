import { z } from 'zod';

/**
 * The names and model specs every part of a definition uses (docs/design.md#workflow-definitions,
 * docs/design.md#complexity-allocation-selection-and-review).
 */

export const MAX_STRING = 100_000;

/** Letters, digits, space, `_` and `-`: no control characters, tags, `..` or path characters. */
export const NameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_-](?:[A-Za-z0-9 _-]*[A-Za-z0-9_-])?$/, {
    message: 'must be 1-100 letters, digits, spaces, "_" or "-", not starting or ending with a space',
  });

/**
 * `provider/model` (for example `sim/sonnet`, `anthropic/claude-sonnet-4-5`), a tier name, or
 * `auto`: the tier the allocation gives the agent's role at the task's complexity
 * (docs/design.md#complexity-allocation-selection-and-review).
 */
export const ModelSpecSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^(?:auto|haiku|sonnet|opus|[a-z][a-z0-9-]*\/[A-Za-z0-9._:/-]+)$/, {
    message: 'must be "<provider>/<model>" (sim, anthropic, openai), a tier (haiku, sonnet, opus) or "auto"',
  });

/**
 * What an agent does in a workflow: `model: "auto"` and selection go by it
 * (docs/design.md#complexity-allocation-selection-and-review).
 */
export const AGENT_ROLES = ['planning', 'development', 'testing', 'review'] as const;
export type AgentRole = (typeof AGENT_ROLES)[number];
