import { AppError } from '../domain/errors.js';

/**
 * The two ways a run stops that are not failures of its own: a cancel (sticky, the workflow ends
 * `cancelled`) and a shutdown (the workflow stays resumable and runs again at the next start). Node
 * handlers, the run and the executor all tell them apart with these.
 */

export function cancelledError(): AppError {
  return new AppError('CANCELLED', 'the workflow was cancelled');
}

export function shuttingDownError(): AppError {
  return new AppError('SHUTTING_DOWN', 'the service is shutting down; the workflow resumes at the next start');
}

export function isShutdown(err: unknown): boolean {
  return err instanceof AppError && err.code === 'SHUTTING_DOWN';
}

export function isCancellation(err: unknown): boolean {
  return err instanceof AppError && err.code === 'CANCELLED';
}
