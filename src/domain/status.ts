/** Lifecycle of workflows and nodes (docs/design.md#execution). Lowercase literals, no enum. */
export const STATUSES = ['idle', 'running', 'completed', 'failed', 'cancelled'] as const;
export type Status = (typeof STATUSES)[number];

export function isTerminal(status: Status): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** Tree-debugger symbols (docs/design.md#events-spans-metrics-and-rewards). */
export const STATUS_SYMBOL: Record<Status, string> = {
  idle: '○',
  running: '◐',
  completed: '✓',
  failed: '✗',
  cancelled: '⊘',
};
