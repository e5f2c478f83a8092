import type pg from 'pg';

/**
 * One baton instance per PostgreSQL database, for now: the engine resumes every unfinished
 * workflow at start and runs what it is given without run leases, so two instances over one
 * database would run the same workflows twice. The first instance holds a session-level advisory
 * lock on a connection of its own for as long as it runs (PostgreSQL frees it when the connection
 * ends, a crash included); a second instance is refused at boot with a message that says why.
 */
const INSTANCE_LOCK = '7161440526158737007';

export interface InstanceLock {
  release(): Promise<void>;
}

export async function takeInstanceLock(pool: pg.Pool): Promise<InstanceLock> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1) AS taken', [
      INSTANCE_LOCK,
    ]);
    if (!rows[0]?.taken) {
      throw new Error(
        'another baton instance is running over this PostgreSQL database: this build runs one instance per database (run leases across instances are not built yet)',
      );
    }
  } catch (err) {
    client.release();
    throw err;
  }
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      try {
        await client.query('SELECT pg_advisory_unlock($1)', [INSTANCE_LOCK]);
      } finally {
        client.release();
      }
    },
  };
}
