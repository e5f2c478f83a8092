/**
 * What every run of one workflow tree shares about spawning (docs/design.md#agent-tools), per process: the spawns
 * of the last minute per root (at most `perMinute`), and a per-root queue, so that checking the
 * tree's counts and creating the child is one step even when parallel branches, or the tree's own
 * children, spawn at the same moment. Times come from the injected clock.
 */
export class SpawnLedger {
  private readonly recent = new Map<string, number[]>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number,
  ) {}

  /** Runs `step` after every earlier step of the same root has settled. */
  serialize<T>(rootId: string, step: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(rootId) ?? Promise.resolve();
    const next = previous.then(step, step);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(rootId, settled);
    void settled.then(() => {
      if (this.queues.get(rootId) === settled) this.queues.delete(rootId);
    });
    return next;
  }

  /** Spawns of the root within the last minute. */
  inLastMinute(rootId: string): number {
    return this.window(rootId).length;
  }

  record(rootId: string): void {
    const window = this.window(rootId);
    window.push(this.now());
    this.recent.set(rootId, window);
  }

  private window(rootId: string): number[] {
    const since = this.now() - 60_000;
    const kept = (this.recent.get(rootId) ?? []).filter((at) => at > since);
    if (kept.length === 0) this.recent.delete(rootId);
    else this.recent.set(rootId, kept);
    return kept;
  }

  get limitPerMinute(): number {
    return this.perMinute;
  }
}
