/** Lifecycle of workflows and nodes (DESIGN §4). Lowercase literals, no enum. */
export const STATUSES = ['idle', 'running', 'completed', 'failed', 'cancelled'] as const;
export type Status = (typeof STATUSES)[number];

export function isTerminal(status: Status): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** Tree-debugger symbols (DESIGN §9). */
export const STATUS_SYMBOL: Record<Status, string> = {
  idle: '○',
  running: '◐',
  completed: '✓',
  failed: '✗',
  cancelled: '⊘',
};
