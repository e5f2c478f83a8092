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

/**
 * Scaled out: another instance took the run over (this one paused or lost the database past its
 * lease). Nothing more of this execution may be written; the new holder resumes the workflow.
 */
export function leaseLostError(): AppError {
  return new AppError('LEASE_LOST', 'this instance lost the run to another; the workflow goes on there');
}

/** The run waits until `resumeAt` (epoch ms) without holding its lease, and resumes then. */
export function parkedError(resumeAt: number): AppError {
  return new AppError('RUN_PARKED', `the run waits until ${new Date(resumeAt).toISOString()} and resumes then`, {
    details: { resumeAt },
  });
}

/** When the run parked by `err` is to resume; undefined for any other error. */
export function resumeAtOf(err: unknown): number | undefined {
  if (!(err instanceof AppError) || err.code !== 'RUN_PARKED') return undefined;
  const at = (err.details as { resumeAt?: unknown } | undefined)?.resumeAt;
  return typeof at === 'number' ? at : undefined;
}

/**
 * The execution stops here without an end of its own, and the workflow resumes: after a shutdown
 * at the next start, after a lost lease on the instance that holds it now, after a parked wait at
 * its time.
 */
export function isShutdown(err: unknown): boolean {
  return (
    err instanceof AppError && (err.code === 'SHUTTING_DOWN' || err.code === 'LEASE_LOST' || err.code === 'RUN_PARKED')
  );
}

export function isCancellation(err: unknown): boolean {
  return err instanceof AppError && err.code === 'CANCELLED';
}
