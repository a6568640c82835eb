import { completeFaults } from './faults.js';
import { endReservation } from './orders.js';
import type { ProviderService } from './provider-service.js';
import type { SandboxState } from './state.js';
import type { BehaviourSettings, FaultSettings, IssuedCard, Reservation } from './types.js';
import type { ReleaseOrder, WebhookDispatcher, WebhookSettings } from './webhook-dispatcher.js';

/**
 * Everything a test can do to the sandbox besides calling the provider API. The HTTP control
 * routes are a thin JSON layer over this; in-process tests may call it directly as `sandbox.control`.
 */
export class SandboxControl {
  constructor(
    private readonly deps: { state: SandboxState; provider: ProviderService; webhooks: WebhookDispatcher; now: () => number },
  ) {}

  getFaults(): FaultSettings {
    return this.deps.state.faults;
  }

  /** Replaces the fault settings; fields left out go back to "no fault". */
  setFaults(faults: Partial<FaultSettings>): FaultSettings {
    this.deps.state.faults = completeFaults(faults);
    return this.deps.state.faults;
  }

  getBehaviour(): BehaviourSettings {
    return this.deps.state.behaviour;
  }

  /** Merges into the behaviour settings (each is an independent switch). */
  setBehaviour(patch: Partial<BehaviourSettings>): BehaviourSettings {
    this.deps.state.behaviour = { ...this.deps.state.behaviour, ...patch };
    return this.deps.state.behaviour;
  }

  /** Every session token stops working now; clients get 10000 and must log in again. */
  expireTokens(): number {
    return this.deps.state.tokens.expireAll(this.deps.now());
  }

  setBusy(active: boolean, opts: { reason?: string; until?: number; mode?: 'reject' | 'delay'; delayMs?: number } = {}): void {
    this.deps.provider.setBusy(active, opts);
  }

  /** Sets the units available now; pending reservations keep theirs. False for an unknown card. */
  setStock(cardId: string, stock: number): boolean {
    const card = this.deps.state.catalog.cards.get(cardId);
    if (!card) return false;
    card.stock = stock;
    return true;
  }

  /** Ends a pending reservation as if the provider cancelled or expired it; its stock returns. */
  endReservation(transactionId: string, status: 'expired' | 'cancelled'): Reservation | undefined {
    const ended = endReservation(this.deps.state, transactionId, status, this.deps.now());
    if (ended) this.deps.provider.announceEnded([ended]);
    return ended;
  }

  /** Applies time-based transitions now (reservation expiry, end of busy mode). */
  sweep(): void {
    this.deps.provider.sweep();
  }

  /** Card codes of a confirmed transaction: in-process only, never over HTTP or in logs. */
  cardsOf(transactionId: string): IssuedCard[] {
    return this.deps.state.confirmations.find((c) => c.transactionId === transactionId && !c.replay)?.cards ?? [];
  }

  configureWebhooks(patch: Partial<WebhookSettings>): WebhookSettings {
    return this.deps.webhooks.configure(patch);
  }

  redeliverWebhook(id: string): boolean {
    return this.deps.webhooks.redeliver(id);
  }

  duplicateWebhook(id: string, count: number): boolean {
    return this.deps.webhooks.duplicate(id, count);
  }

  releaseWebhooks(order: ReleaseOrder): Promise<string[]> {
    return this.deps.webhooks.release(order);
  }

  /** Back to the seed catalog and initial settings; sessions, orders, calls and webhooks forgotten. */
  reset(): void {
    this.deps.state.reset();
    this.deps.webhooks.clear();
  }
}
