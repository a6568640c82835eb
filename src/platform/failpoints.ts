/**
 * Failpoints for crash tests: named places in the purchase pipeline where a test can make the
 * process die (SIGKILL, no clean-up) to prove that every crash window is recoverable.
 *
 * GATEWAY_FAILPOINTS="before_initiate=1,after_confirm_answer=0.25" kills the process when a
 * named point is reached, with that probability. The configuration refuses it in production.
 */
export const FAILPOINTS = [
  /** "reserving" is committed; initiate-card-request not yet sent. */
  'before_initiate',
  /** The provider answered initiate; the transaction_id is not yet committed. */
  'after_initiate_answer',
  /** "confirming" is committed; confirm-order not yet sent. */
  'before_confirm',
  /** The provider answered confirm with the codes; they are not yet encrypted and stored. */
  'after_confirm_answer',
  /** The order is settled and committed; callbacks and waiters not yet told. */
  'after_settle',
] as const;

export type Failpoint = (typeof FAILPOINTS)[number];

export type FailpointHook = (name: Failpoint) => void;

export function parseFailpoints(raw: string): { points?: Map<Failpoint, number>; problem?: string } {
  const points = new Map<Failpoint, number>();
  for (const entry of raw.split(',').map((e) => e.trim()).filter(Boolean)) {
    const [name, p = '1'] = entry.split('=');
    if (!(FAILPOINTS as readonly string[]).includes(name!)) return { problem: `unknown failpoint "${name}" (known: ${FAILPOINTS.join(', ')})` };
    const probability = Number(p);
    if (!Number.isFinite(probability) || probability < 0 || probability > 1) return { problem: `failpoint ${name} needs a probability from 0 to 1` };
    points.set(name as Failpoint, probability);
  }
  return { points };
}

/** The hook the pipeline calls at each failpoint: a no-op unless configured. */
export function createFailpointHook(points: Map<Failpoint, number> | undefined, random: () => number = Math.random): FailpointHook {
  if (!points || points.size === 0) return () => undefined;
  return (name) => {
    const p = points.get(name);
    if (p !== undefined && random() < p) {
      process.stderr.write(`failpoint ${name}: killing the process\n`);
      process.kill(process.pid, 'SIGKILL');
    }
  };
}
