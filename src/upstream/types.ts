import type { Dispatcher } from 'undici';
import type { Logger } from '../platform/logger.js';
import type { UpstreamEndpoint } from './endpoints.js';
import type { UpstreamErrorKind } from './errors.js';
import type { BackoffSettings } from './retry-policy.js';

export interface Vendor {
  vendorId: string;
  name: string;
  nameAr: string;
}

export interface Denomination {
  cardId: string;
  nameEn: string;
  nameAr: string;
  /** Unit price, exact decimal string as the provider sent it. */
  amount: string;
  balance: number;
}

export interface CardBalance {
  cardId: string;
  balance: number;
}

export interface InitiateCardRequestInput {
  cardId: string;
  quantity: number;
  /** The merchant's own integer reference (a number, or a canonical integer string). */
  transactionNumber: number | string;
}

export interface InitiatedTransaction {
  transactionId: string;
}

export interface ConfirmOrderInput {
  transactionId: string;
  /** Exact decimal string computed by the caller, e.g. "0.3" or "15.00"; never a float. */
  totalAmount: string;
  paymentId: string;
}

export interface IssuedCard {
  /** Has monetary value: never log it, never put it in an error. */
  cardCode: string;
  cardNumber: string;
}

/** One HTTP attempt, for order timelines and metrics. Contains no secret and no card data. */
export interface UpstreamCallRecord {
  endpoint: UpstreamEndpoint;
  /** 1 for the first attempt of a call, counting retries and the re-login repeat. */
  attempt: number;
  ok: boolean;
  /** The provider's code (11111 on success), when an envelope was read. */
  upstreamCode: number | undefined;
  httpStatus: number | undefined;
  durationMs: number;
  errorKind: UpstreamErrorKind | undefined;
}

export interface RetrySettings extends BackoffSettings {
  /** Total attempts of a read call, including the first (≥ 1). */
  maxAttempts: number;
}

export interface UpstreamClientOptions {
  /** Development base URL, or Production's including its `/production770` segment; paths are appended. */
  baseUrl: string;
  username: string;
  privateKey: string;
  /** Connect, response-headers and body-idle timeout of each attempt. */
  timeoutMs: number;
  /** Egress through an HTTP(S) proxy (undici ProxyAgent), when only that host's IP is registered. */
  proxyUrl?: string;
  logger: Logger;
  /** Injected transport (tests, shared pools); the client does not close what it did not create. */
  dispatcher?: Dispatcher;
  /** Max simultaneous connections to the provider (default 16). */
  connections?: number;
  retry?: Partial<RetrySettings>;
  /**
   * Log in again proactively when the token is older than this. The provider never states a token
   * lifetime, so by default tokens are only replaced when the provider answers 10000.
   */
  tokenMaxAgeMs?: number;
  /**
   * How the session token is put in `Authorization`. The spec shows a bare token on the reference
   * pages and in the request-flow text, and `Bearer <token>` only in the error reference; bare is
   * the majority reading. Switchable without a code change if the provider turns out to need Bearer.
   */
  authorizationScheme?: 'bare' | 'bearer';
  /** Called once per HTTP attempt; exceptions it throws are logged and ignored. */
  onCall?: (record: UpstreamCallRecord) => void;
  /** Test seams: jitter source, back-off sleep, and the clock of tokenMaxAgeMs. */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/** Per-call options of the order calls. */
export interface CallOptions {
  /**
   * Called once per HTTP attempt of this call (after the client's own onCall), e.g. to put the
   * attempts on an order's timeline, including a login this call started (not one it joined).
   */
  onCall?: (record: UpstreamCallRecord) => void;
}

export interface UpstreamClient {
  login(): Promise<void>;
  getCardList(): Promise<Vendor[]>;
  getCardDetailsList(vendorId: string): Promise<Denomination[]>;
  getBalance(cardId: string, options?: CallOptions): Promise<CardBalance>;
  initiateCardRequest(input: InitiateCardRequestInput, options?: CallOptions): Promise<InitiatedTransaction>;
  confirmOrder(input: ConfirmOrderInput, options?: CallOptions): Promise<IssuedCard[]>;
  /** Closes the connection pool if the client created it. Pending calls fail. */
  close(): Promise<void>;
}
