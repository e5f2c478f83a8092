import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createInProcessWorkQueue } from '../../../src/inproc/work-queue.js';

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets pending promise callbacks (handler completions, queue pumping) run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Handler whose runs stay open until the test finishes them one by one. */
function controlledHandler() {
  const started: string[] = [];
  const gates = new Map<string, Deferred>();
  let running = 0;
  let maxRunning = 0;
  const handler = async (workflowId: string): Promise<void> => {
    started.push(workflowId);
    running += 1;
    maxRunning = Math.max(maxRunning, running);
    const gate = deferred();
    gates.set(workflowId, gate);
    try {
      await gate.promise;
    } finally {
      running -= 1;
    }
  };
  return {
    handler,
    started,
    finish: (id: string) => gates.get(id)?.resolve(),
    fail: (id: string, error: unknown) => gates.get(id)?.reject(error),
    get maxRunning() {
      return maxRunning;
    },
  };
}

describe('createInProcessWorkQueue', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  it('holds work enqueued before start, then runs it in FIFO order', async () => {
    const queue = createInProcessWorkQueue({ concurrency: 1 });
    const ran: string[] = [];
    queue.enqueue('wf_1', 't');
    queue.enqueue('wf_2', 't');
    queue.enqueue('wf_3', 't');
    await settle();
    expect(queue.depth).toBe(3);

    queue.start(async (id) => {
      ran.push(id);
    });
    await settle();
    expect(ran).toEqual(['wf_1', 'wf_2', 'wf_3']);
    expect(queue.depth).toBe(0);
  });

  it('runs at most `concurrency` handlers at once and reports waiting items as depth', async () => {
    const queue = createInProcessWorkQueue({ concurrency: 2 });
    const control = controlledHandler();
    queue.start(control.handler);
    for (const id of ['a', 'b', 'c', 'd', 'e']) queue.enqueue(id, 't');
    await settle();
    expect(control.started).toEqual(['a', 'b']);
    expect(queue.depth).toBe(3);

    control.finish('a');
    await settle();
    expect(control.started).toEqual(['a', 'b', 'c']);
    expect(queue.depth).toBe(2);

    for (const id of ['b', 'c', 'd', 'e']) {
      control.finish(id);
      await settle();
    }
    expect(control.started).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(control.maxRunning).toBe(2);
    expect(queue.depth).toBe(0);
  });

  it('runs an id once when it is enqueued again while waiting, and once more after it when running', async () => {
    const queue = createInProcessWorkQueue({ concurrency: 2 });
    const control = controlledHandler();
    queue.enqueue('a', 't');
    queue.enqueue('b', 't');
    queue.enqueue('b', 't'); // while waiting
    expect(queue.depth).toBe(2);
    queue.start(control.handler);
    await settle();
    expect(control.started).toEqual(['a', 'b']);
    // While running: not a second run at once, but one more after it (twice counts once).
    queue.enqueue('a', 't');
    queue.enqueue('a', 't');
    expect(queue.depth).toBe(0);
    await settle();
    expect(control.started).toEqual(['a', 'b']);

    control.finish('a');
    await settle();
    expect(control.started).toEqual(['a', 'b', 'a']);
    expect(control.maxRunning).toBe(2);
    control.finish('a');
    control.finish('b');
    await settle();
    expect(control.started).toEqual(['a', 'b', 'a']);

    // Once finished, the same id may be enqueued (and run) again.
    queue.enqueue('a', 't');
    await settle();
    control.finish('a');
    await settle();
    expect(control.started).toEqual(['a', 'b', 'a', 'a']);
  });

  it('catches rejected and throwing handlers, reports them, and keeps going', async () => {
    const errors: Array<[unknown, string]> = [];
    const queue = createInProcessWorkQueue({
      concurrency: 1,
      onError: (error, workflowId) => errors.push([error, workflowId]),
    });
    const ran: string[] = [];
    const boom = new Error('boom');
    queue.start((id) => {
      ran.push(id);
      if (id === 'sync-throw') throw boom;
      if (id === 'reject') return Promise.reject(boom);
      return Promise.resolve();
    });
    queue.enqueue('reject', 't');
    queue.enqueue('sync-throw', 't');
    queue.enqueue('ok', 't');
    await settle();
    await settle();

    expect(ran).toEqual(['reject', 'sync-throw', 'ok']);
    expect(errors).toEqual([
      [boom, 'reject'],
      [boom, 'sync-throw'],
    ]);
    expect(unhandled).toEqual([]);
  });

  it('survives a failing handler without onError, and an onError that throws', async () => {
    for (const onError of [
      undefined,
      () => {
        throw new Error('reporter broke');
      },
    ]) {
      const queue = createInProcessWorkQueue({ concurrency: 1, ...(onError ? { onError } : {}) });
      const ran: string[] = [];
      queue.start(async (id) => {
        ran.push(id);
        if (id === 'bad') throw new Error('bad');
      });
      queue.enqueue('bad', 't');
      queue.enqueue('good', 't');
      await settle();
      await settle();
      expect(ran).toEqual(['bad', 'good']);
    }
    expect(unhandled).toEqual([]);
  });

  it('stop() stops delivering and resolves only when running handlers settle', async () => {
    const queue = createInProcessWorkQueue({ concurrency: 2 });
    const control = controlledHandler();
    queue.start(control.handler);
    for (const id of ['a', 'b', 'c']) queue.enqueue(id, 't');
    await settle();
    expect(control.started).toEqual(['a', 'b']);

    let stopped = false;
    const stopping = queue.stop().then(() => {
      stopped = true;
    });
    control.finish('a');
    await settle();
    expect(stopped).toBe(false);
    expect(control.started).toEqual(['a', 'b']); // 'c' is not handed out after stop
    control.fail('b', new Error('aborted by shutdown'));
    await stopping;
    expect(stopped).toBe(true);
    expect(queue.depth).toBe(1);

    queue.enqueue('d', 't');
    await settle();
    expect(control.started).toEqual(['a', 'b']);
    expect(queue.depth).toBe(2);
    expect(unhandled).toEqual([]);
  });

  it('stop() resolves at once when idle, and start() after stop resumes waiting work', async () => {
    const queue = createInProcessWorkQueue({ concurrency: 1 });
    queue.enqueue('a', 't');
    await queue.stop();
    const ran: string[] = [];
    queue.start(async (id) => {
      ran.push(id);
    });
    await settle();
    expect(ran).toEqual(['a']);
    expect(() => queue.start(async () => {})).toThrow(/already started/);
  });

  it('rejects a concurrency that is not a positive integer', () => {
    expect(() => createInProcessWorkQueue({ concurrency: 0 })).toThrow(RangeError);
    expect(() => createInProcessWorkQueue({ concurrency: 1.5 })).toThrow(RangeError);
  });

  it('keeps FIFO order over a long queue', async () => {
    const queue = createInProcessWorkQueue({ concurrency: 3 });
    const ids = Array.from({ length: 5_000 }, (_, i) => `wf_${i}`);
    for (const id of ids) queue.enqueue(id, 't');
    const ran: string[] = [];
    queue.start(async (id) => {
      ran.push(id);
    });
    while (queue.depth > 0) await settle();
    await queue.stop();
    expect(ran).toEqual(ids);
  });
});

describe('fair scheduling across tenants', () => {
  it("one tenant's backlog does not queue another tenant's work behind it", async () => {
    const queue = createInProcessWorkQueue({ concurrency: 2 });
    const h = controlledHandler();
    for (let i = 0; i < 10; i++) queue.enqueue(`a${i}`, 'tenant-a');
    queue.start(h.handler);
    await settle();
    expect(h.started).toEqual(['a0', 'a1']);
    // Arrives behind eight waiting workflows of tenant A.
    queue.enqueue('b0', 'tenant-b');
    h.finish('a0');
    await settle();
    // The next free slot goes to the tenant whose turn it is, not to the head of one long line.
    expect(h.started).toEqual(['a0', 'a1', 'b0']);
    h.finish('a1');
    h.finish('b0');
    await settle();
    expect(h.started.slice(3)).toEqual(['a2', 'a3']);
  });

  it('caps the workflows one tenant runs at once, leaving the slots to others', async () => {
    const queue = createInProcessWorkQueue({ concurrency: 4, perTenant: 2 });
    const h = controlledHandler();
    queue.start(h.handler);
    for (let i = 0; i < 5; i++) queue.enqueue(`a${i}`, 'tenant-a');
    await settle();
    expect(h.started).toEqual(['a0', 'a1']);
    expect(queue.depth).toBe(3);
    queue.enqueue('b0', 'tenant-b');
    await settle();
    expect(h.started).toEqual(['a0', 'a1', 'b0']);
    h.finish('a0');
    await settle();
    expect(h.started).toEqual(['a0', 'a1', 'b0', 'a2']);
  });

  it('rejects a non-positive per-tenant limit', () => {
    expect(() => createInProcessWorkQueue({ concurrency: 2, perTenant: 0 })).toThrow(RangeError);
  });
});
