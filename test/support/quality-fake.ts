import { seededRandom } from '../../src/metrics/selection.js';
import type { RecordedRequest } from './fake-anthropic.js';
import { chatError, chatText, type FakeChatUsage, type FakeServer, startFakeOpenAi } from './fake-openai.js';

/**
 * A quality-sensitive OpenAI-compatible fake on 127.0.0.1 (docs/workflows.md#cost-aware-selection):
 * its solver models answer a task right or wrong by model and by the task's difficulty, and its
 * reviewer model approves exactly the right answers — so a workflow's outcome says whether the
 * chosen agent was good enough, and selection can learn from it.
 *
 * A solver's prompt carries `taskMarker(difficulty, n)` ("[task: hard #7]"): the n-th task of that
 * difficulty. Task n has a level u_n = frac(offset + n·φ⁻¹), the offset drawn from the seed and the
 * difficulty; a model whose rate at that difficulty is p answers it right iff u_n < p. So the same
 * task is hard or easy for every arm of an experiment (a better model is right wherever a worse
 * one is), and the golden-ratio sequence spreads the levels evenly: every stretch of tasks meets
 * the stated rates closely, and the figures measure the selection, not the luck of the draw.
 */

export type Difficulty = 'easy' | 'hard';
export type SolverRates = Record<Difficulty, number>;

export interface QualityFakeOptions {
  seed: number;
  /** Provider model name (`openai/<name>`) → its chance of a right answer, by difficulty. */
  solvers: Record<string, SolverRates>;
  /** The provider model that reviews. */
  reviewer: string;
  /** What a solver call and a review call report using. */
  usage?: { solve: FakeChatUsage; review: FakeChatUsage };
}

export interface QualityFake {
  server: FakeServer;
  url: string;
  /** Whether `model` answers the n-th task of `difficulty` right. */
  isRight(model: string, difficulty: Difficulty, n: number): boolean;
  close(): Promise<void>;
}

const GOLDEN = (Math.sqrt(5) - 1) / 2;
const MARKER = /\[task: (easy|hard) #(\d+)\]/;
const ANSWER = /answer for (easy|hard) #(\d+): (\d+)/;

export const taskMarker = (difficulty: Difficulty, n: number): string => `[task: ${difficulty} #${n}]`;

/** What a solver is told to answer, and what the reviewer reads back. */
const answerLine = (difficulty: Difficulty, n: number, value: number): string =>
  `answer for ${difficulty} #${n}: ${value}`;

export async function startQualityFake(options: QualityFakeOptions): Promise<QualityFake> {
  const usage = options.usage ?? { solve: {}, review: {} };
  const random = seededRandom(options.seed);
  const offsets: Record<Difficulty, number> = { easy: random(), hard: random() };
  const level = (difficulty: Difficulty, n: number) => (offsets[difficulty] + n * GOLDEN) % 1;
  const rightValue = (difficulty: Difficulty, n: number) =>
    1000 + ((n * 7919 + (difficulty === 'hard' ? 4999 : 0) + options.seed * 31) % 9000);
  const isRight = (model: string, difficulty: Difficulty, n: number): boolean => {
    const rates = options.solvers[model];
    if (rates === undefined) throw new Error(`the quality fake has no solver "${model}"`);
    return level(difficulty, n) < rates[difficulty];
  };

  const reply = (request: RecordedRequest) => {
    const body = request.body as { model?: string; messages?: Array<{ role: string; content: unknown }> };
    const user = (body.messages ?? [])
      .filter((m) => m.role === 'user')
      .map((m) => String(m.content))
      .join('\n');
    if (body.model === options.reviewer) {
      const found = ANSWER.exec(user);
      const difficulty = found?.[1] as Difficulty | undefined;
      const approved = difficulty !== undefined && Number(found?.[3]) === rightValue(difficulty, Number(found?.[2]));
      const verdict = approved
        ? { approved, concerns: [], severity: 'none' }
        : { approved, concerns: ['the answer is wrong'], severity: 'major' };
      return { body: chatText(JSON.stringify(verdict), usage.review) };
    }
    const task = MARKER.exec(user);
    if (body.model === undefined || options.solvers[body.model] === undefined || task === null) {
      return { status: 400, body: chatError('invalid_request_error', 'the quality fake needs a solver and a task') };
    }
    const difficulty = task[1] as Difficulty;
    const n = Number(task[2]);
    const value = rightValue(difficulty, n) + (isRight(body.model, difficulty, n) ? 0 : 1);
    return { body: chatText(answerLine(difficulty, n, value), usage.solve) };
  };

  const server = await startFakeOpenAi({ defaultReply: reply });
  return { server, url: server.url, isRight, close: () => server.close() };
}
