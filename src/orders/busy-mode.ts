import type { PrismaClient } from '../platform/db.js';

export interface BusyState {
  active: boolean;
  reason: string | null;
  /** When busy mode ends by itself, if the provider said. */
  until: Date | null;
  updatedAt: Date | null;
}

const NAME = 'busy_mode';
const NOT_BUSY: BusyState = { active: false, reason: null, until: null, updatedAt: null };

/**
 * The provider's busy mode, as a switch every instance shares (PostgreSQL). While it is on, the
 * pipeline holds new initiations back and orders keep being accepted; it is set by the provider's
 * webhooks (busy_mode.activated / revoked) or by an operator, and ends by itself at `until`.
 * Reads are cached for a second: the pipeline asks once per order step.
 */
export function createBusyMode({ prisma, now = () => new Date(), cacheMs = 1_000 }: { prisma: PrismaClient; now?: () => Date; cacheMs?: number }) {
  let cached: { state: BusyState; at: number } | undefined;

  function effective(state: BusyState): BusyState {
    return state.active && state.until !== null && state.until.getTime() <= now().getTime() ? { ...state, active: false } : state;
  }

  return {
    async current(): Promise<BusyState> {
      if (cached && now().getTime() - cached.at < cacheMs) return effective(cached.state);
      const row = await prisma.providerState.findUnique({ where: { name: NAME } });
      const state: BusyState = row ? { active: row.active, reason: row.reason, until: row.until, updatedAt: row.updatedAt } : NOT_BUSY;
      cached = { state, at: now().getTime() };
      return effective(state);
    },

    /**
     * Turns busy mode on or off. With `eventAt` (the provider's time of the change), the change
     * applies only if no later one has been applied: webhooks arrive out of order.
     * Returns the state now in force and whether this change was applied.
     */
    async set(active: boolean, opts: { reason?: string | null; until?: Date | null; eventAt?: Date } = {}): Promise<BusyState & { applied: boolean }> {
      const data = { active, reason: active ? (opts.reason ?? null) : null, until: active ? (opts.until ?? null) : null, eventAt: opts.eventAt ?? null };
      let applied = true;
      if (opts.eventAt) {
        await prisma.providerState.createMany({ data: [{ name: NAME, active: false, eventAt: null }], skipDuplicates: true });
        const { count } = await prisma.providerState.updateMany({
          where: { name: NAME, OR: [{ eventAt: null }, { eventAt: { lte: opts.eventAt } }] },
          data,
        });
        applied = count === 1;
      } else {
        await prisma.providerState.upsert({ where: { name: NAME }, create: { name: NAME, ...data }, update: data });
      }
      cached = undefined;
      const row = await prisma.providerState.findUniqueOrThrow({ where: { name: NAME } });
      return { active: row.active, reason: row.reason, until: row.until, updatedAt: row.updatedAt, applied };
    },
  };
}

export type BusyMode = ReturnType<typeof createBusyMode>;
