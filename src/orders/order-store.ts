import { Prisma, type PrismaClient } from '../platform/db.js';
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

/**
 * Every column of `orders` under its Prisma field name, so a raw `RETURNING`/`SELECT` answers
 * exactly what `prisma.order.findUnique` would (Decimal, BigInt and Date included; a test holds
 * the two equal). `orders` here is the table or a CTE with its columns.
 */
export const ORDER_COLUMNS = Prisma.raw(
  [
    ['id', 'id'],
    ['api_key_id', 'apiKeyId'],
    ['idempotency_key', 'idempotencyKey'],
    ['request_hash', 'requestHash'],
    ['card_id', 'cardId'],
    ['quantity', 'quantity'],
    ['unit_price', 'unitPrice'],
    ['total_amount', 'totalAmount'],
    ['reference', 'reference'],
    ['callback_url', 'callbackUrl'],
    ['transaction_number', 'transactionNumber'],
    ['previous_transaction_numbers', 'previousTransactionNumbers'],
    ['transaction_id', 'transactionId'],
    ['payment_id', 'paymentId'],
    ['status', 'status'],
    ['status_detail', 'statusDetail'],
    ['failure_code', 'failureCode'],
    ['failure_message', 'failureMessage'],
    ['failure_upstream_code', 'failureUpstreamCode'],
    ['balance_checks', 'balanceChecks'],
    ['initiate_attempts', 'initiateAttempts'],
    ['confirm_attempts', 'confirmAttempts'],
    ['version', 'version'],
    ['lease_owner', 'leaseOwner'],
    ['lease_until', 'leaseUntil'],
    ['created_at', 'createdAt'],
    ['updated_at', 'updatedAt'],
    ['fulfilled_at', 'fulfilledAt'],
  ]
    .map(([column, field]) => `"${column}" AS "${field}"`)
    .join(', '),
);

/** A timeline row as the commit statement takes it (snake_case keys for jsonb_to_recordset). */
interface EventRecord {
  kind: string;
  from_status: string | null;
  to_status: string | null;
  endpoint: string | null;
  ok: boolean | null;
  upstream_code: number | null;
  duration_ms: number | null;
  detail: Prisma.InputJsonValue | null;
}

function eventRecords(order: OrderRow, change: Commit): EventRecord[] {
  const events: EventRecord[] = callEvents(order.id, change.calls ?? []).map((e) => ({
    kind: e.kind,
    from_status: null,
    to_status: null,
    endpoint: e.endpoint ?? null,
    ok: e.ok ?? null,
    upstream_code: e.upstreamCode ?? null,
    duration_ms: e.durationMs ?? null,
    detail: (e.detail ?? null) as Prisma.InputJsonValue | null,
  }));
  const none = { endpoint: null, ok: null, upstream_code: null, duration_ms: null };
  if (change.status && change.status !== order.status) {
    events.push({
      kind: 'status',
      from_status: order.status,
      to_status: change.status,
      ...none,
      detail: {
        ...(change.statusDetail ? { detail: change.statusDetail } : {}),
        ...(change.failure ? { failure: change.failure.code } : {}),
        ...(change.transactionId ? { transactionId: change.transactionId } : {}),
      },
    });
  }
  if (change.note) events.push({ kind: 'note', from_status: null, to_status: null, ...none, detail: { note: change.note } });
  return events;
}

type Sql = Pick<PrismaClient, '$queryRaw'>;

export function createOrderStore(prisma: PrismaClient, owner: string, leaseMs: number) {

  /**
   * The whole commit as ONE statement: the compare-and-set UPDATE, its timeline rows and its
   * cards in data-modifying CTEs. A single statement is atomic on its own, so an order without
   * extra writes needs no BEGIN/COMMIT round trips; when the UPDATE matches no row (version
   * moved, lease lost) the inserts insert nothing. Raw SQL rather than Prisma's typed API
   * because this runs several times per order: the typed path cost ~4 statements and a query
   * compilation per commit, and was the largest CPU cost of the pipeline.
   */
  async function commitStatement(db: Sql, order: OrderRow, change: Commit): Promise<OrderRow | undefined> {
    const events = eventRecords(order, change);
    const cards = (change.cards ?? []).map((c) => ({
      position: c.position,
      key_id: c.keyId,
      nonce: Buffer.from(c.nonce).toString('base64'),
      ciphertext: Buffer.from(c.ciphertext).toString('base64'),
      card_number: c.cardNumber,
    }));
    const counters = change.counters ?? {};
    const failure = change.failure;
    // Timestamps from this process's clock, as every other write of the gateway (Prisma's
    // @updatedAt, the leases): one clock for lease decisions, whatever the database's.
    const now = new Date();
    const rows = await db.$queryRaw<OrderRow[]>`
      WITH updated AS (
        UPDATE orders SET
          version = version + 1,
          lease_until = ${new Date(now.getTime() + leaseMs)},
          updated_at = ${now},
          status = COALESCE(${change.status ?? null}::text::order_status, status),
          status_detail = CASE WHEN ${change.statusDetail !== undefined} THEN ${change.statusDetail ?? null}::text ELSE status_detail END,
          transaction_id = COALESCE(${change.transactionId ?? null}::text, transaction_id),
          failure_code = CASE WHEN ${failure !== undefined} THEN ${failure?.code ?? null}::text ELSE failure_code END,
          failure_message = CASE WHEN ${failure !== undefined} THEN ${failure?.message ?? null}::text ELSE failure_message END,
          failure_upstream_code = CASE WHEN ${failure !== undefined} THEN ${failure?.upstreamCode ?? null}::int ELSE failure_upstream_code END,
          fulfilled_at = CASE WHEN ${change.status === 'fulfilled'} THEN ${now}::timestamptz ELSE fulfilled_at END,
          balance_checks = COALESCE(${counters.balanceChecks ?? null}::int, balance_checks),
          initiate_attempts = COALESCE(${counters.initiateAttempts ?? null}::int, initiate_attempts),
          confirm_attempts = COALESCE(${counters.confirmAttempts ?? null}::int, confirm_attempts)
        WHERE id = ${order.id}::uuid AND version = ${change.version}::int AND lease_owner = ${owner}
        RETURNING *
      ),
      timeline AS (
        INSERT INTO order_events (order_id, kind, from_status, to_status, endpoint, ok, upstream_code, duration_ms, detail)
        SELECT updated.id, e.kind, e.from_status, e.to_status, e.endpoint, e.ok, e.upstream_code, e.duration_ms, e.detail
        FROM updated,
             ROWS FROM (jsonb_to_recordset(${JSON.stringify(events)}::jsonb)
               AS (kind text, from_status text, to_status text, endpoint text, ok boolean, upstream_code int, duration_ms int, detail jsonb))
             WITH ORDINALITY AS e(kind, from_status, to_status, endpoint, ok, upstream_code, duration_ms, detail, n)
        ORDER BY e.n
      ),
      stored_cards AS (
        INSERT INTO order_cards (order_id, position, key_id, nonce, ciphertext, card_number)
        SELECT updated.id, c.position, c.key_id, decode(c.nonce, 'base64'), decode(c.ciphertext, 'base64'), c.card_number
        FROM updated, jsonb_to_recordset(${JSON.stringify(cards)}::jsonb) AS c(position int, key_id text, nonce text, ciphertext text, card_number text)
      )
      SELECT ${ORDER_COLUMNS} FROM updated`;
    return rows[0];
  }

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
      const now = new Date();
      const rows = await prisma.$queryRaw<OrderRow[]>`
        UPDATE orders SET lease_owner = ${owner}, lease_until = ${new Date(now.getTime() + leaseMs)}, updated_at = ${now}
        WHERE id = ${id}::uuid AND (lease_owner IS NULL OR lease_until < ${now} OR lease_owner = ${owner})
        RETURNING ${ORDER_COLUMNS}`;
      return rows[0];
    },

    async release(id: string): Promise<void> {
      await prisma.$executeRaw`UPDATE orders SET lease_owner = NULL, lease_until = NULL, updated_at = ${new Date()} WHERE id = ${id}::uuid AND lease_owner = ${owner}`;
    },

    /**
     * Applies one decision atomically: the order row (compare-and-set on version and lease,
     * renewing the lease), its timeline, encrypted cards and any extra writes (then in one
     * transaction with them). Throws LeaseLostError when the order moved under us; nothing is
     * written then.
     */
    async commit(order: OrderRow, change: Commit): Promise<OrderRow> {
      const also = change.also;
      if (!also) {
        const updated = await commitStatement(prisma, order, change);
        if (!updated) throw new LeaseLostError(order.id);
        return updated;
      }
      return prisma.$transaction(async (tx) => {
        const updated = await commitStatement(tx, order, change);
        if (!updated) throw new LeaseLostError(order.id);
        await also(tx, updated);
        return updated;
      });
    },
  };
}

export type OrderStore = ReturnType<typeof createOrderStore>;
