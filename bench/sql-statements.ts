import pg from 'pg';

/**
 * Diagnostic only: counts the SQL statements this process sends (BEGIN/COMMIT included) by
 * wrapping pg's Client#query, which Prisma's pg adapter calls for every statement. Benchmarks
 * read `statementsSent()` before and after the load and take the difference.
 */
let sent = 0;
let counting = false;

export function countStatements(): void {
  if (counting) return;
  counting = true;
  const proto = pg.Client.prototype as unknown as { query: (this: pg.Client, ...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    sent++;
    return original.apply(this, args);
  };
}

/** Statements sent since countStatements() was first called. */
export function statementsSent(): number {
  return sent;
}
