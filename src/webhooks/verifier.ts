import { decodeSecret, verify, DEFAULT_TOLERANCE_SECONDS, type VerifyFailure } from '../platform/standard-webhooks.js';

export type WebhookHeaders = Record<string, string | string[] | undefined>;

export interface VerifyInput {
  headers: WebhookHeaders;
  /** The body exactly as received: signatures cover bytes, not parsed JSON. */
  rawBody: Buffer;
  sourceIp: string;
}

export type VerifyOutcome =
  | { ok: true; /** The provider's event id (dedup key of the inbox). */ id: string; /** When the sender signed it. */ signedAt?: Date }
  | { ok: false; reason: VerifyFailure | (string & {}) };

/** Decides whether a delivery comes from the provider. A different provider format is another implementation. */
export interface WebhookVerifier {
  verify(input: VerifyInput): VerifyOutcome;
}

export interface StandardWebhooksVerifierOptions {
  /** `whsec_…` secrets; any one verifies (rotation). At least one. */
  secrets: readonly string[];
  toleranceSeconds?: number;
  /** Clock in ms (tests freeze it to probe the tolerance edges). */
  now?: () => number;
}

/**
 * Standard Webhooks (upstream-webhooks.md): HMAC-SHA256 over `id.timestamp.body`, compared in
 * constant time against every `v1,` signature with every configured secret, and a timestamp
 * within the tolerance either way (replay protection).
 */
export function createStandardWebhooksVerifier({ secrets, toleranceSeconds = DEFAULT_TOLERANCE_SECONDS, now = Date.now }: StandardWebhooksVerifierOptions): WebhookVerifier {
  if (secrets.length === 0) throw new Error('the webhook verifier needs at least one secret');
  // Decoded once: a bad secret fails at start, and each delivery costs one HMAC per secret.
  const keys = secrets.map((s) => decodeSecret(s));
  return {
    verify({ headers, rawBody }) {
      const result = verify({ headers, rawBody, keys, toleranceSeconds, nowSeconds: Math.floor(now() / 1000) });
      return result.ok ? { ok: true, id: result.id, signedAt: new Date(result.timestamp * 1000) } : result;
    },
  };
}
