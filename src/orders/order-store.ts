import type { Prisma, PrismaClient } from '../platform/db.js';
import type { UpstreamCallRecord } from '../upstream/index.js';
import type { Failure, OrderStatus } from './order-state.js';

export type OrderRow = Prisma.OrderGetPayload<object>;

/** Someone else changed the order, or took its lease, since we read it: stop driving it. */
export class LeaseLostError extends Error {
  constructor(orderId: string) {
    super(`order ${orderId} changed under us (lease lost or version moved); leaving it to its current owner`);
    this.name = 'LeaseLostError';
  }
}

export interface EncryptedCard {
  position: number;
  keyId: string;
  nonce: Uint8Array;
  ciphertext: Uint8Array;
  cardNumber: string;
}

export interface Commit {
  /** The version read; the update applies only if it is still current and we hold the lease. */
  version: number;
  status?: OrderStatus;
  statusDetail?: string | null;
  failure?: Failure;
  transactionId?: string;
  counters?: { balanceChecks?: number; initiateAttempts?: number; confirmAttempts?: number };
  calls?: UpstreamCallRecord[];
  note?: string;
  cards?: EncryptedCard[];
  /** Extra writes in the same transaction (e.g. the callback outbox row). */
  also?: (tx: Prisma.TransactionClient, order: OrderRow) => Promise<void>;
}

export function callEvents(orderId: string, calls: readonly UpstreamCallRecord[]): Prisma.OrderEventCreateManyInput[] {
  return calls.map((c) => ({
    orderId,
    kind: 'provider_call',
    endpoint: c.endpoint,
    ok: c.ok,
    upstreamCode: c.upstreamCode ?? null,
    durationMs: Math.round(c.durationMs),
    detail: { attempt: c.attempt, httpStatus: c.httpStatus ?? null, errorKind: c.errorKind ?? null },
  }));
}

export function createOrderStore(prisma: PrismaClient, owner: string, leaseMs: number) {
  const leaseUntil = () => new Date(Date.now() + leaseMs);

  return {
    owner,

    load(id: string): Promise<OrderRow | null> {
      return prisma.order.findUnique({ where: { id } });
    },

    /**
     * Takes the order's lease unless another live worker holds it, returning the order (undefined
     * when it is held elsewhere or does not exist). This, not BullMQ's job lock,
     * is what keeps two workers (a stalled job and its retry, duplicates after a Redis loss)
     * from driving one order at once; every commit also checks it.
     */
    async acquire(id: string): Promise<OrderRow | undefined> {
      const [taken] = await prisma.order.updateManyAndReturn({
        where: { id, OR: [{ leaseOwner: null }, { leaseUntil: { lt: new Date() } }, { leaseOwner: owner }] },
        data: { leaseOwner: owner, leaseUntil: leaseUntil() },
      });
      return taken;
    },

    async release(id: string): Promise<void> {
      await prisma.order.updateMany({ where: { id, leaseOwner: owner }, data: { leaseOwner: null, leaseUntil: null } });
    },

    /**
     * Applies one decision atomically: the order row (compare-and-set on version and lease,
     * renewing the lease), its timeline, encrypted cards and any extra writes. Throws
     * LeaseLostError when the order moved under us; nothing is written then.
     */
    async commit(order: OrderRow, change: Commit): Promise<OrderRow> {
      return prisma.$transaction(async (tx) => {
        const now = new Date();
        const [updated] = await tx.order.updateManyAndReturn({
          where: { id: order.id, version: change.version, leaseOwner: owner },
          data: {
            version: { increment: 1 },
            leaseUntil: leaseUntil(),
            updatedAt: now,
            ...(change.status ? { status: change.status } : {}),
            ...(change.statusDetail !== undefined ? { statusDetail: change.statusDetail } : {}),
            ...(change.transactionId !== undefined ? { transactionId: change.transactionId } : {}),
            ...(change.failure
              ? { failureCode: change.failure.code, failureMessage: change.failure.message, failureUpstreamCode: change.failure.upstreamCode ?? null }
              : {}),
            ...(change.status === 'fulfilled' ? { fulfilledAt: now } : {}),
            ...(change.counters?.balanceChecks !== undefined ? { balanceChecks: change.counters.balanceChecks } : {}),
            ...(change.counters?.initiateAttempts !== undefined ? { initiateAttempts: change.counters.initiateAttempts } : {}),
            ...(change.counters?.confirmAttempts !== undefined ? { confirmAttempts: change.counters.confirmAttempts } : {}),
          },
        });
        if (!updated) throw new LeaseLostError(order.id);

        const events: Prisma.OrderEventCreateManyInput[] = callEvents(order.id, change.calls ?? []);
        if (change.status && change.status !== order.status) {
          events.push({
            orderId: order.id,
            kind: 'status',
            fromStatus: order.status,
            toStatus: change.status,
            detail: {
              ...(change.statusDetail ? { detail: change.statusDetail } : {}),
              ...(change.failure ? { failure: change.failure.code } : {}),
              ...(change.transactionId ? { transactionId: change.transactionId } : {}),
            },
          });
        }
        if (change.note) events.push({ orderId: order.id, kind: 'note', detail: { note: change.note } });
        if (events.length > 0) await tx.orderEvent.createMany({ data: events });

        if (change.cards && change.cards.length > 0) {
          await tx.orderCard.createMany({
            data: change.cards.map((c) => ({
              orderId: order.id,
              position: c.position,
              keyId: c.keyId,
              nonce: Buffer.from(c.nonce),
              ciphertext: Buffer.from(c.ciphertext),
              cardNumber: c.cardNumber,
            })),
          });
        }
        await change.also?.(tx, updated);
        return updated;
      });
    },
  };
}

export type OrderStore = ReturnType<typeof createOrderStore>;
