import { EventEmitter } from 'node:events';
import type { BusyState, CallRecord, Confirmation, Reservation } from './types.js';
import type { DeliveryAttempt, WebhookEventRecord } from './webhook-dispatcher.js';

/**
 * In-process notifications of the sandbox, for tests that must act at the exact moment the
 * provider committed something (e.g. kill a worker right after the reservation exists but before
 * the gateway learns its transaction_id). Listeners run synchronously at the commit point, before
 * the HTTP answer is written or dropped.
 */
export interface SandboxEventMap {
  'reservation.committed': [Reservation];
  'confirmation.committed': [Confirmation];
  'reservation.ended': [Reservation];
  'busy.changed': [BusyState];
  call: [CallRecord];
  'webhook.attempt': [WebhookEventRecord, DeliveryAttempt];
}

export class SandboxEvents extends EventEmitter<SandboxEventMap> {
  /** Resolves with the first event of `name` matching `predicate` (for `await` in tests). */
  waitFor<K extends keyof SandboxEventMap>(name: K, predicate: (...args: SandboxEventMap[K]) => boolean = () => true): Promise<SandboxEventMap[K]> {
    return new Promise((resolve) => {
      const listener = (...args: SandboxEventMap[K]): void => {
        if (!predicate(...args)) return;
        this.off(name, listener as never);
        resolve(args);
      };
      this.on(name, listener as never);
    });
  }
}
