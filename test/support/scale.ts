/**
 * One switch for the reliability suites: `npm test` runs them at the counts that fit in a few
 * minutes, `npm run test:soak` (BATON_SOAK=1) runs the same code with the soak's counts.
 */
export const SOAK = process.env.BATON_SOAK === '1';

/** `fast` under `npm test`, `soak` under `npm run test:soak`. */
export function scale<T>(fast: T, soak: T): T {
  return SOAK ? soak : fast;
}

/**
 * Prints a suite's figures as one line (`[figures] <suite> {...}`), so a CI log shows what each
 * suite measured and not only that it passed.
 */
export function reportFigures(suite: string, figures: Record<string, unknown>): void {
  console.log(`[figures] ${suite} ${JSON.stringify(figures)}`);
}
