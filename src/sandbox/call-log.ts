import { redactRawMembers } from './raw-json.js';
import type { SandboxState } from './state.js';
import type { CallRecord } from './types.js';

/**
 * The log of provider calls as the sandbox received them. Bodies are kept raw so tests can check
 * the exact bytes a client sent (money literals above all); the password is redacted in place and
 * tokens are never stored (only whether, and how, they were sent).
 */

export const REDACTED_BODY_KEYS = ['password'] as const;

export const DEFAULT_MAX_CALLS = 5_000;

export function redactBody(raw: string): string {
  return raw === '' ? raw : redactRawMembers(raw, REDACTED_BODY_KEYS);
}

/** Appends a record, dropping the oldest beyond `max` so a long-running sandbox stays bounded. */
export function appendCall(state: SandboxState, record: Omit<CallRecord, 'seq'>, max: number): CallRecord {
  state.callSequence += 1;
  const full: CallRecord = { seq: state.callSequence, ...record };
  state.calls.push(full);
  if (state.calls.length > max) state.calls.splice(0, state.calls.length - max);
  return full;
}
