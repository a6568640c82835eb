import { setTimeout as delay } from 'node:timers/promises';
import { createCallRunner } from './call-runner.js';
import type { UpstreamEndpoint } from './endpoints.js';
import { UpstreamError } from './errors.js';
import { catalogId, decimalAmount, encodeJsonBody, integerField, InvalidInputError, nonEmptyString } from './json-body.js';
import { balanceSchema, cardDetailsListSchema, cardListSchema, confirmSchema, initiateSchema, loginSchema } from './schemas.js';
import { createTokenCache } from './token-cache.js';
import { createDispatcher } from './transport.js';
import type { RetrySettings, UpstreamClient, UpstreamClientOptions } from './types.js';

export const DEFAULT_RETRY: RetrySettings = { maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 5_000, jitter: 'full' };
const DEFAULT_CONNECTIONS = 16;

export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const { baseUrl, username, privateKey } = validateOptions(options);
  const retry: RetrySettings = { ...DEFAULT_RETRY, ...options.retry };
  if (!Number.isInteger(retry.maxAttempts) || retry.maxAttempts < 1) throw new TypeError('retry.maxAttempts must be ≥ 1');
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher =
    options.dispatcher ??
    createDispatcher({ timeoutMs: options.timeoutMs, connections: options.connections ?? DEFAULT_CONNECTIONS, proxyUrl: options.proxyUrl });
  const now = options.now ?? Date.now;
  let closed = false;

  const run = createCallRunner({
    baseUrl,
    dispatcher,
    timeoutMs: options.timeoutMs,
    retry,
    logger: options.logger.child({ component: 'upstream' }),
    authorizationScheme: options.authorizationScheme ?? 'bare',
    tokens: () => tokens,
    onCall: options.onCall,
    random: options.random ?? Math.random,
    sleep: options.sleep ?? ((ms) => delay(ms)),
    isClosed: () => closed,
  });

  // JSON.stringify is fine here: no numbers. The password stays in this closure only.
  const loginBody = JSON.stringify({ user_name: username, password: privateKey });
  const tokens = createTokenCache({
    login: async (onCall) => (await run('login', loginBody, loginSchema, onCall)).token,
    now,
    maxAgeMs: options.tokenMaxAgeMs,
  });

  return {
    async login() {
      await tokens.refresh();
    },

    async getCardList() {
      return (await run('getCardList', undefined, cardListSchema)).data;
    },

    async getCardDetailsList(vendorId) {
      const body = build('getCardDetailsList', () => encodeJsonBody({ vendor_id: catalogId(vendorId, 'vendorId') }));
      return (await run('getCardDetailsList', body, cardDetailsListSchema)).data;
    },

    async getBalance(cardId, callOptions) {
      const body = build('getBalance', () => encodeJsonBody({ card_id: catalogId(cardId, 'cardId') }));
      const { data } = await run('getBalance', body, balanceSchema, callOptions?.onCall);
      // The spec promises one entry echoing card_id. Stock of another card must never be taken for
      // this one, so an answer without a matching entry is refused.
      const entry = data.find((e) => sameId(e.card_id, cardId));
      if (!entry) {
        throw new UpstreamError({ kind: 'malformed', endpoint: 'getBalance', requestSent: true, detail: 'no entry for the requested card_id' });
      }
      return { cardId, balance: entry.balance };
    },

    async initiateCardRequest(input, callOptions) {
      const body = build('initiateCardRequest', () =>
        encodeJsonBody({
          card_id: catalogId(input.cardId, 'cardId'),
          // Spelled exactly as the provider expects; `quantity` is rejected or ignored (spec §4.5).
          quantiry: integerField(input.quantity, 'quantity', 1),
          transaction_number: integerField(input.transactionNumber, 'transactionNumber', 0),
        }),
      );
      return run('initiateCardRequest', body, initiateSchema, callOptions?.onCall);
    },

    async confirmOrder(input, callOptions) {
      const body = build('confirmOrder', () =>
        encodeJsonBody({
          transaction_id: nonEmptyString(input.transactionId, 'transactionId'),
          total_amount: decimalAmount(input.totalAmount, 'totalAmount'),
          payment_id: nonEmptyString(input.paymentId, 'paymentId'),
        }),
      );
      return (await run('confirmOrder', body, confirmSchema, callOptions?.onCall)).data;
    },

    async close() {
      if (closed) return;
      closed = true;
      // close() (not destroy()) lets requests already on the wire finish: cutting a confirm off
      // mid-answer would turn a success into an unknown outcome.
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}

/** Input problems become typed errors before anything is sent. */
function build(endpoint: UpstreamEndpoint, encode: () => string): string {
  try {
    return encode();
  } catch (error) {
    if (error instanceof InvalidInputError) {
      throw new UpstreamError({ kind: 'invalid_request', endpoint, requestSent: false, detail: error.message });
    }
    throw error;
  }
}

/** card_id comes back as an integer though the catalog gave a string: compare by value for canonical integers. */
function sameId(echoed: string, requested: string): boolean {
  if (echoed === requested) return true;
  const canonical = /^(?:0|[1-9]\d*)$/;
  return canonical.test(echoed) && /^\d+$/.test(requested) && BigInt(echoed) === BigInt(requested);
}

function validateOptions(options: UpstreamClientOptions): { baseUrl: string; username: string; privateKey: string } {
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch {
    throw new TypeError('upstream baseUrl is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('upstream baseUrl must be http(s)');
  if (url.search || url.hash) throw new TypeError('upstream baseUrl must not have a query or fragment');
  // Messages never echo the values: the key is secret and a username is account data.
  if (!options.username) throw new TypeError('upstream username is required');
  if (!options.privateKey) throw new TypeError('upstream privateKey is required');
  if (!(options.timeoutMs > 0)) throw new TypeError('upstream timeoutMs must be > 0');
  return { baseUrl: options.baseUrl, username: options.username, privateKey: options.privateKey };
}
