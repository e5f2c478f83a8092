import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The suites `npm run test:mutation` (stryker.config.json) runs against each mutant: the in-process
 * unit and engine tests, which reach every mutated module. Left out: the api, process, browser and
 * contract suites (HTTP servers, child processes, a browser), the real-time timing checks, and the
 * unit and engine suites about other subsystems (storage, tool and output bounds, prompt injection,
 * running caps, the harness itself), which reach the mutated modules only in passing and would
 * lengthen every surviving mutant's run.
 */

/**
 * Stryker stops a mutant's run at its first failing test, so the likeliest killers go first: the
 * unit test named after the mutated file (`src/x/name.ts` → `test/unit/x/name.test.ts`, which
 * Stryker passes as the run's `related` file), then the other unit files, then the engine files,
 * smaller files first within each group (vitest's own order runs the slowest first).
 */
class LikeliestKillerFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const mutated = new Set((this.ctx.config.related ?? []).map((file) => basename(file).replace(/\.ts$/, '')));
    const group = (spec: TestSpecification) => {
      if (!spec.moduleId.includes('/test/unit/')) return 2;
      return mutated.has(basename(spec.moduleId).replace(/\.test\.ts$/, '')) ? 0 : 1;
    };
    const rank = (spec: TestSpecification) => [group(spec), statSync(spec.moduleId).size] as const;
    return [...files].sort((a, b) => {
      const [groupA, sizeA] = rank(a);
      const [groupB, sizeB] = rank(b);
      return groupA - groupB || sizeA - sizeB;
    });
  }
}

export default defineConfig({
  test: {
    environment: 'node',
    include: ['test/unit/**/*.test.ts', 'test/engine/**/*.test.ts'],
    exclude: [
      'test/**/*.timing.test.ts',
      'test/unit/store/**',
      'test/engine/amplification.test.ts',
      'test/engine/corpus-deleted-mid-loop.test.ts',
      'test/engine/engine-harness.test.ts',
      'test/engine/introspection-tools.test.ts',
      'test/engine/many-children-warnings.test.ts',
      'test/engine/output-cap.test.ts',
      'test/engine/prompt-injection.test.ts',
      'test/engine/provider-body-cap.test.ts',
      'test/engine/retrieval-injection.test.ts',
      'test/engine/running-caps.test.ts',
      'test/engine/spawn-bomb.test.ts',
      'test/engine/tool-input-bound.test.ts',
      'test/engine/tool-name-bound.test.ts',
      'test/engine/tool-result-cap.test.ts',
    ],
    // A mutant that makes a test hang is caught by the test's timeout well before Stryker's own.
    testTimeout: 10_000,
    hookTimeout: 10_000,
    // One module graph for all files of a mutant's run: re-importing the app for every file was
    // most of a run's time. No test of these suites keeps module state that another could see.
    isolate: false,
    sequence: { sequencer: LikeliestKillerFirst },
  },
});
