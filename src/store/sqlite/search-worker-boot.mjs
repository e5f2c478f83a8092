// The search worker's entry when baton runs from its TypeScript sources (`npm start`, the tests):
// a worker thread does not inherit the parent's tsx loader hooks, so it registers them itself.
// Resolved from this file, so the working directory does not matter. See search-runner.ts.
import { register } from 'tsx/esm/api';

register();
await import('./search-worker.ts');
