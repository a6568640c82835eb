import type { AfterCommitFault, CommittingEndpoint, Endpoint, FaultSettings } from './types.js';

/**
 * Fault injection decisions, as pure functions over a FaultSettings value. The mutable part
 * (consuming "next N calls" counters) is explicit: `takeFailNext` and `takeAfterCommit` return
 * the settings to store next, so the caller owns state and these stay testable without I/O.
 */

export function defaultFaults(): FaultSettings {
  return { latencyMs: 0, endpointLatencyMs: {}, errorRate: {}, failNext: {}, afterCommit: {} };
}

/** Fills a partial (from options or the control API) into a complete settings value. */
export function completeFaults(partial: Partial<FaultSettings> = {}): FaultSettings {
  const base = defaultFaults();
  return {
    latencyMs: partial.latencyMs ?? base.latencyMs,
    endpointLatencyMs: { ...(partial.endpointLatencyMs ?? {}) },
    errorRate: { ...(partial.errorRate ?? {}) },
    failNext: { ...(partial.failNext ?? {}) },
    afterCommit: Object.fromEntries(Object.entries(partial.afterCommit ?? {}).map(([k, v]) => [k, { ...v }])),
  };
}

/** An endpoint's own latency replaces the global one rather than adding to it. */
export function latencyFor(faults: FaultSettings, endpoint: Endpoint): number {
  return faults.endpointLatencyMs[endpoint] ?? faults.latencyMs;
}

export interface FailDecision {
  fail: boolean;
  reason?: 'fail_next' | 'error_rate';
  next: FaultSettings;
}

/** Whether this call fails with 10001 before doing any work; consumes one "next N" unit if so. */
export function decidePreWorkFailure(faults: FaultSettings, endpoint: Endpoint, random: () => number): FailDecision {
  const remaining = faults.failNext[endpoint] ?? 0;
  if (remaining > 0) {
    const failNext = { ...faults.failNext };
    if (remaining - 1 > 0) failNext[endpoint] = remaining - 1;
    else delete failNext[endpoint];
    return { fail: true, reason: 'fail_next', next: { ...faults, failNext } };
  }
  const rate = faults.errorRate[endpoint] ?? 0;
  if (rate > 0 && random() < rate) return { fail: true, reason: 'error_rate', next: faults };
  return { fail: false, next: faults };
}

export interface AfterCommitDecision {
  fault?: AfterCommitFault;
  next: FaultSettings;
}

/** The after-commit fault for this call, if any; a `times` budget is consumed. */
export function takeAfterCommit(faults: FaultSettings, endpoint: CommittingEndpoint): AfterCommitDecision {
  const fault = faults.afterCommit[endpoint];
  if (!fault) return { next: faults };
  if (fault.times === undefined) return { fault, next: faults };
  const afterCommit = { ...faults.afterCommit };
  if (fault.times - 1 > 0) afterCommit[endpoint] = { ...fault, times: fault.times - 1 };
  else delete afterCommit[endpoint];
  return { fault, next: { ...faults, afterCommit } };
}
