import { createHash } from 'node:crypto';
import type { Prisma, PrismaClient } from '../platform/db.js';

export type AuditAction = 'reveal' | 'reveal_denied' | 'retry' | 'resolve' | 'webhook_replay';

export interface AuditInput {
  actorKeyId: string | null;
  actorName: string;
  action: AuditAction;
  orderId?: string | null;
  sourceIp?: string | null;
  /** What was done and why; never codes or secrets. */
  detail?: Record<string, string | number | boolean | null>;
}

export const GENESIS_HASH = '0'.repeat(64);

// Any fixed constant: one lock serialises appends so each entry links to the one before it.
const AUDIT_LOCK_KEY = 0x61756469746c6f67n;

interface Hashable {
  id: bigint;
  at: Date;
  actorKeyId: string | null;
  actorName: string;
  action: string;
  orderId: string | null;
  sourceIp: string | null;
  detail: unknown;
  prevHash: string;
}

/** Stable JSON: object keys sorted, so the same entry always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function entryHash(e: Hashable): string {
  const body = canonical({
    id: e.id.toString(),
    at: e.at.toISOString(),
    actorKeyId: e.actorKeyId,
    actorName: e.actorName,
    action: e.action,
    orderId: e.orderId,
    sourceIp: e.sourceIp,
    detail: e.detail,
  });
  return createHash('sha256').update(e.prevHash).update('\n').update(body).digest('hex');
}

/**
 * Appends one entry, chained to the last: under a transaction-scoped advisory lock (so
 * concurrent appends form one chain), the entry's hash covers the previous hash and its own
 * content. Pass `tx` to write it in the same transaction as the action it records.
 */
export async function appendAudit(db: PrismaClient | Prisma.TransactionClient, input: AuditInput): Promise<{ id: bigint; hash: string }> {
  const run = async (tx: Prisma.TransactionClient) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${AUDIT_LOCK_KEY})`;
    const last = await tx.auditEntry.findFirst({ orderBy: { id: 'desc' }, select: { hash: true } });
    const prevHash = last?.hash ?? GENESIS_HASH;
    const [{ id }] = await tx.$queryRaw<[{ id: bigint }]>`SELECT nextval(pg_get_serial_sequence('audit_entries', 'id')) AS id`;
    const at = new Date();
    const entry: Hashable = {
      id,
      at,
      actorKeyId: input.actorKeyId,
      actorName: input.actorName,
      action: input.action,
      orderId: input.orderId ?? null,
      sourceIp: input.sourceIp ?? null,
      detail: input.detail ?? {},
      prevHash,
    };
    const hash = entryHash(entry);
    await tx.auditEntry.create({ data: { ...entry, detail: entry.detail as Prisma.InputJsonValue, hash } });
    return { id, hash };
  };
  return '$transaction' in db ? db.$transaction(run) : run(db);
}

export interface ChainReport {
  entries: number;
  ok: boolean;
  /** The first entry whose hash or link does not match, if any. */
  brokenAt?: bigint;
}

/** Walks the whole chain; any edited, inserted or removed entry shows as a mismatch. */
export async function verifyAuditChain(prisma: PrismaClient, batch = 1_000): Promise<ChainReport> {
  let prev = GENESIS_HASH;
  let after = 0n;
  let entries = 0;
  for (;;) {
    const rows = await prisma.auditEntry.findMany({ where: { id: { gt: after } }, orderBy: { id: 'asc' }, take: batch });
    if (rows.length === 0) return { entries, ok: true };
    for (const row of rows) {
      entries++;
      if (row.prevHash !== prev || entryHash(row) !== row.hash) return { entries, ok: false, brokenAt: row.id };
      prev = row.hash;
      after = row.id;
    }
  }
}
