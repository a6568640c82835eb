import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Order } from '../../../src/generated/prisma/client.js';
import type { PrismaClient } from '../../../src/platform/db.js';
import { uniqueId } from '../../helpers/env.js';

/** A card code that must never leave the gateway in a callback. */
export const FAKE_CARD_CODE = 'FAKE-CODE-7Q2W-9X4K';

export interface OrderOverrides {
  callbackUrl?: string | null;
  status?: Order['status'];
  reference?: string | null;
  failureCode?: string | null;
  failureMessage?: string | null;
  failureUpstreamCode?: number | null;
}

/** One vendor and denomination per test file; orders reference the denomination. */
export async function seedCatalog(prisma: PrismaClient): Promise<string> {
  const vendorId = uniqueId('V');
  const cardId = uniqueId('C');
  const now = new Date();
  await prisma.vendor.create({ data: { id: vendorId, nameEn: 'Vendor', nameAr: 'بائع', firstSeenAt: now, lastSeenAt: now } });
  await prisma.denomination.create({
    data: { id: cardId, vendorId, nameEn: '10 USD', nameAr: '10 دولار', unitPrice: '9.99', unitPriceValue: '9.99', stock: 100, firstSeenAt: now, lastSeenAt: now },
  });
  return cardId;
}

/** An order as the pipeline would leave it at a terminal status, with an encrypted-looking card. */
export async function createOrder(prisma: PrismaClient, cardId: string, overrides: OrderOverrides = {}): Promise<Order> {
  const status = overrides.status ?? 'fulfilled';
  const order = await prisma.order.create({
    data: {
      apiKeyId: randomUUID(),
      idempotencyKey: uniqueId('idem'),
      requestHash: 'a'.repeat(64),
      cardId,
      quantity: 2,
      unitPrice: '9.99',
      totalAmount: '19.98',
      reference: overrides.reference === undefined ? 'shop-order-42' : overrides.reference,
      callbackUrl: overrides.callbackUrl === undefined ? 'http://127.0.0.1:1/never' : overrides.callbackUrl,
      paymentId: uniqueId('pay'),
      transactionId: status === 'fulfilled' ? uniqueId('tx') : null,
      status,
      failureCode: overrides.failureCode ?? null,
      failureMessage: overrides.failureMessage ?? null,
      failureUpstreamCode: overrides.failureUpstreamCode ?? null,
      fulfilledAt: status === 'fulfilled' ? new Date() : null,
    },
  });
  if (status === 'fulfilled') {
    // Stored in the clear here on purpose: whatever the pipeline keeps, a callback must not carry it.
    await prisma.orderCard.create({
      data: { orderId: order.id, position: 0, keyId: 'k1', nonce: Buffer.alloc(24), ciphertext: Buffer.from(FAKE_CARD_CODE), cardNumber: FAKE_CARD_CODE },
    });
  }
  return order;
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the storefront answers: a status (and optional body/headers), or 'hang' to never answer. */
export type Reply = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

/** A storefront stand-in on a real port: records each request, answers from a script. */
export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Replies used in order; once used up, `fallback` answers. */
  script(replies: Reply[], fallback?: Reply): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let replies: Reply[] = [];
  let fallback: Reply = { status: 200 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const reply = replies.shift() ?? fallback;
      if (reply === 'hang') return;
      res.writeHead(reply.status, reply.headers ?? {});
      res.end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/giftcards`,
    requests,
    script(next, nextFallback = { status: 200 }) {
      replies = [...next];
      fallback = nextFallback;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
