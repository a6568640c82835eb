import { buildLiveCatalog, type CatalogSeed, type LiveCatalog } from './catalog.js';
import { TokenStore } from './tokens.js';
import type { BehaviourSettings, BusyState, CallRecord, Confirmation, FaultSettings, RejectedConfirm, Reservation } from './types.js';

/**
 * The sandbox's whole in-memory state. One instance per sandbox, owned by the composition root
 * and passed explicitly; nothing here is module-level, so several sandboxes can run side by side
 * in one test process.
 */
export class SandboxState {
  catalog: LiveCatalog;
  readonly tokens = new TokenStore();
  readonly reservations = new Map<string, Reservation>();
  readonly confirmations: Confirmation[] = [];
  readonly rejectedConfirms: RejectedConfirm[] = [];
  readonly calls: CallRecord[] = [];
  /** Every code ever issued, so a replacement or a later order never repeats one. */
  readonly issuedCodes = new Set<string>();
  serialSequence = 0;
  callSequence = 0;
  faults: FaultSettings;
  behaviour: BehaviourSettings;
  busy: BusyState;

  constructor(
    private readonly seed: CatalogSeed,
    private readonly initialFaults: () => FaultSettings,
    private readonly initialBehaviour: () => BehaviourSettings,
  ) {
    this.catalog = buildLiveCatalog(seed);
    this.faults = initialFaults();
    this.behaviour = initialBehaviour();
    this.busy = idleBusy();
  }

  /** Back to the seed: catalog stock, no sessions, no orders, no call log, initial settings. */
  reset(): void {
    this.catalog = buildLiveCatalog(this.seed);
    this.tokens.expireAll(0);
    this.reservations.clear();
    this.confirmations.length = 0;
    this.rejectedConfirms.length = 0;
    this.calls.length = 0;
    this.faults = this.initialFaults();
    this.behaviour = this.initialBehaviour();
    this.busy = idleBusy();
    // issuedCodes and serialSequence are kept: codes stay unique across resets, like a real issuer.
  }

  /** Units reserved but not yet confirmed, per card (for the inspection view). */
  pendingUnits(cardId: string): number {
    let units = 0;
    for (const r of this.reservations.values()) if (r.cardId === cardId && r.status === 'pending') units += r.quantity;
    return units;
  }
}

export function idleBusy(): BusyState {
  return { active: false, mode: 'reject', delayMs: 0 };
}
