import type { Prisma } from '../platform/db.js';
import type { FailpointHook } from '../platform/failpoints.js';
import type { Logger } from '../platform/logger.js';
import { isUpstreamError, salvageOf, type UpstreamClient } from '../upstream/index.js';
import type { BusyMode } from './busy-mode.js';
import { collectCalls } from './call-recorder.js';
import { ORDER_POLICY, type OrderPolicy } from './order-policy.js';
import {
  afterBalance,
  afterConfirm,
  afterInitiate,
  isTerminal,
  nextStep,
  type CallFailure,
  type CallOutcome,
  type Decision,
  type OrderFacts,
} from './order-state.js';
import { LeaseLostError, type EncryptedCard, type OrderRow, type OrderStore } from './order-store.js';

export interface CardEncrypter {
  encrypt(input: { orderId: string; position: number; code: string }): { keyId: string; nonce: Uint8Array; ciphertext: Uint8Array };
}

/** What happens when an order reaches a terminal status: written with it, then announced after commit. */
export interface TerminalHooks {
  /** Whether inTransaction has anything to write for this order (else the commit needs no transaction). */
  writesFor(order: OrderRow): boolean;
  /** Inside the status change's transaction (e.g. the callback outbox row); returns what to announce. */
  inTransaction(tx: Prisma.TransactionClient, order: OrderRow): Promise<string[]>;
  /** After commit: wake waiting requests, enqueue callback deliveries. Failures are logged only. */
  afterCommit(order: OrderRow, outboxIds: string[]): Promise<void>;
}

export interface PipelineDeps {
  store: OrderStore;
  upstream: Pick<UpstreamClient, 'getBalance' | 'initiateCardRequest' | 'confirmOrder'>;
  vault: CardEncrypter;
  busy: BusyMode;
  terminal: TerminalHooks;
  log: Logger;
  policy?: OrderPolicy;
  random?: () => number;
  /** Crash-test hook (src/platform/failpoints.ts); a no-op in production. */
  failpoint?: FailpointHook;
}

export type RunResult = { kind: 'settled'; status: string } | { kind: 'retry'; delayMs: number; reason: string };

function facts(order: OrderRow): OrderFacts {
  return {
    status: order.status,
    quantity: order.quantity,
    transactionId: order.transactionId,
    balanceChecks: order.balanceChecks,
    initiateAttempts: order.initiateAttempts,
    confirmAttempts: order.confirmAttempts,
  };
}

/** Turns a thrown error into what the state machine needs; anything that is not a provider-client error is rethrown. */
function failureOf(error: unknown): CallFailure {
  if (!isUpstreamError(error)) throw error;
  const salvage = salvageOf(error);
  return {
    kind: error.kind,
    upstreamCode: error.upstreamCode,
    retrySafe: error.retrySafe,
    outcomeUnknown: error.outcomeUnknown,
    requestSent: error.requestSent,
    salvagedTransactionId: salvage?.transactionId,
    salvagedCards: salvage?.cards?.length,
  };
}

/**
 * Drives one order as far as it can go now: balance → initiate → confirm, each decision taken by
 * the pure state machine and committed (compare-and-set, under the order's lease) before the
 * next provider call. Returns when the order is settled or must wait (retry with a delay).
 *
 * Invariants kept here:
 * - "reserving" is committed before initiate-card-request is sent, and the transaction_id is
 *   committed as the very next thing after the answer;
 * - "confirming" (with the attempt count) is committed before each confirm-order;
 * - card codes are encrypted and committed in the same transaction as "fulfilled";
 * - terminal changes write their callback outbox row in that transaction too.
 */
export async function advanceOrder(deps: PipelineDeps, orderId: string): Promise<RunResult> {
  const { store, log } = deps;
  const policy = deps.policy ?? ORDER_POLICY;
  const random = deps.random ?? Math.random;
  const jitter = (ms: number) => Math.round(ms / 2 + random() * (ms / 2));
  const failpoint = deps.failpoint ?? (() => undefined);

  const acquired = await store.acquire(orderId);
  if (!acquired) {
    return (await store.load(orderId))
      ? { kind: 'retry', delayMs: 5_000, reason: 'another worker holds this order' }
      : { kind: 'settled', status: 'missing' };
  }
  // Each commit returns the row as written, so the loop never reads the order again.
  let order: OrderRow = acquired;
  try {
    for (;;) {
      const busy = order.status === 'queued' ? await deps.busy.current() : { active: false, until: null };
      const step = nextStep(facts(order), busy.active, policy);

      switch (step.kind) {
        case 'done':
          return { kind: 'settled', status: order.status };

        case 'hold_busy': {
          if (order.statusDetail !== 'provider_busy') {
            await store.commit(order, { version: order.version, statusDetail: 'provider_busy', note: 'held: the provider is in busy mode' });
          }
          const untilMs = busy.until ? busy.until.getTime() - Date.now() : policy.busyRecheckMs;
          return { kind: 'retry', delayMs: Math.max(250, Math.min(policy.busyRecheckMs, untilMs)), reason: 'provider busy' };
        }

        case 'escalate':
          await settle(deps, order, { kind: 'transition', to: 'needs_attention', detail: step.detail }, {});
          return { kind: 'settled', status: 'needs_attention' };

        case 'check_balance': {
          const run = await collectCalls((call) => deps.upstream.getBalance(order.cardId, call));
          const outcome: CallOutcome<number> = 'result' in run ? { ok: true, value: run.result.balance } : { ok: false, failure: failureOf(run.error) };
          const decision = afterBalance(facts(order), outcome, policy);
          const balanceChecks = order.balanceChecks + 1;
          if (decision.kind === 'retry') {
            await store.commit(order, { version: order.version, statusDetail: decision.detail, counters: { balanceChecks }, calls: run.calls });
            return { kind: 'retry', delayMs: jitter(decision.delayMs), reason: decision.detail };
          }
          if (decision.to !== 'reserving') {
            await settle(deps, order, decision, { balanceChecks }, run.calls);
            return { kind: 'settled', status: decision.to };
          }
          // Committed before initiate is sent: a crash from here on leaves "reserving", which the
          // next run escalates instead of reserving a second time.
          const reserving = await store.commit(order, {
            version: order.version,
            status: 'reserving',
            statusDetail: null,
            counters: { balanceChecks, initiateAttempts: order.initiateAttempts + 1 },
            calls: run.calls,
          });
          failpoint('before_initiate');
          const initiated = await collectCalls((call) =>
            deps.upstream.initiateCardRequest({ cardId: reserving.cardId, quantity: reserving.quantity, transactionNumber: reserving.transactionNumber.toString() }, call),
          );
          failpoint('after_initiate_answer');
          const next = afterInitiate(
            facts(reserving),
            'result' in initiated ? { ok: true, value: initiated.result.transactionId } : { ok: false, failure: failureOf(initiated.error) },
            policy,
          );
          if (next.kind === 'transition' && next.to === 'queued') {
            await store.commit(reserving, { version: reserving.version, status: 'queued', statusDetail: next.detail ?? null, calls: initiated.calls });
            return { kind: 'retry', delayMs: jitter(policy.retryBaseMs * reserving.initiateAttempts), reason: next.detail ?? 'initiate not sent' };
          }
          if (next.kind === 'transition' && next.to === 'reserved') {
            order = await store.commit(reserving, { version: reserving.version, status: 'reserved', transactionId: next.transactionId, calls: initiated.calls });
            continue;
          }
          await settle(deps, reserving, next, {}, initiated.calls);
          return { kind: 'settled', status: next.kind === 'transition' ? next.to : 'reserving' };
        }

        case 'confirm': {
          const confirming = await store.commit(order, {
            version: order.version,
            status: 'confirming',
            statusDetail: null,
            counters: { confirmAttempts: order.confirmAttempts + 1 },
          });
          failpoint('before_confirm');
          const run = await collectCalls((call) =>
            deps.upstream.confirmOrder({ transactionId: confirming.transactionId!, totalAmount: confirming.totalAmount.toString(), paymentId: confirming.paymentId }, call),
          );
          let received: { cardCode: string; cardNumber: string }[] | undefined;
          let outcome: CallOutcome<{ cards: number }>;
          if ('result' in run) {
            received = run.result;
            outcome = { ok: true, value: { cards: received.length } };
          } else {
            const failure = failureOf(run.error);
            received = salvageOf(run.error)?.cards;
            outcome = { ok: false, failure };
          }
          failpoint('after_confirm_answer');
          const decision = afterConfirm(facts(confirming), outcome, policy);
          if (decision.kind === 'retry') {
            await store.commit(confirming, { version: confirming.version, statusDetail: decision.detail, calls: run.calls });
            return { kind: 'retry', delayMs: jitter(decision.delayMs), reason: decision.detail };
          }
          const cards = (received ?? []).map((card, position) => encryptCard(deps.vault, confirming.id, position, card));
          await settle(deps, confirming, decision, {}, run.calls, cards);
          return { kind: 'settled', status: decision.to };
        }
      }
    }
  } catch (err) {
    if (err instanceof LeaseLostError) {
      log.warn({ orderId }, err.message);
      return { kind: 'retry', delayMs: 5_000, reason: 'lease lost' };
    }
    throw err;
  } finally {
    await store.release(orderId).catch((err: Error) => log.warn({ orderId, err: { message: err.message } }, 'could not release order lease'));
  }
}

function encryptCard(vault: CardEncrypter, orderId: string, position: number, card: { cardCode: string; cardNumber: string }): EncryptedCard {
  const sealed = vault.encrypt({ orderId, position, code: card.cardCode });
  return { position, keyId: sealed.keyId, nonce: sealed.nonce, ciphertext: sealed.ciphertext, cardNumber: card.cardNumber };
}

/** Commits a transition (terminal ones with their outbox rows), then runs the after-commit hooks. */
async function settle(
  deps: PipelineDeps,
  order: OrderRow,
  decision: Decision,
  counters: { balanceChecks?: number },
  calls: Parameters<OrderStore['commit']>[1]['calls'] = [],
  cards: EncryptedCard[] = [],
): Promise<OrderRow> {
  if (decision.kind !== 'transition') throw new Error('settle needs a transition');
  let outboxIds: string[] = [];
  const terminal = isTerminal(decision.to);
  const updated = await deps.store.commit(order, {
    version: order.version,
    status: decision.to,
    statusDetail: decision.detail ?? null,
    ...(decision.failure ? { failure: decision.failure } : {}),
    ...(decision.transactionId !== undefined ? { transactionId: decision.transactionId } : {}),
    counters,
    calls,
    cards,
    ...(terminal && deps.terminal.writesFor(order)
      ? {
          also: async (tx: Prisma.TransactionClient, row: OrderRow) => {
            outboxIds = await deps.terminal.inTransaction(tx, row);
          },
        }
      : {}),
  });
  if (terminal) {
    deps.failpoint?.('after_settle');
    deps.log.info({ orderId: order.id, status: decision.to, detail: decision.detail, failure: decision.failure?.code }, 'order settled');
    await deps.terminal.afterCommit(updated, outboxIds).catch((err: Error) => {
      deps.log.warn({ orderId: order.id, err: { message: err.message } }, 'after-commit hooks failed; the reconciler delivers pending callbacks');
    });
  }
  return updated;
}
