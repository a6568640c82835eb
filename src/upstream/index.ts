export { createUpstreamClient, DEFAULT_RETRY } from './client.js';
export { UpstreamError, isUpstreamError, salvageOf, UPSTREAM_ERROR_KINDS, type UpstreamErrorKind } from './errors.js';
export type { Salvage } from './salvage.js';
export { UPSTREAM_CODES, SUCCESS_CODE, describeUpstreamCode, type KnownUpstreamCode } from './codes.js';
export { UPSTREAM_ENDPOINTS, type UpstreamEndpoint } from './endpoints.js';
export { classifyFailure, backoffDelayMs, type FailureClassification, type FailureFacts } from './retry-policy.js';
export type {
  CallOptions,
  CardBalance,
  ConfirmOrderInput,
  Denomination,
  InitiateCardRequestInput,
  InitiatedTransaction,
  IssuedCard,
  RetrySettings,
  UpstreamCallRecord,
  UpstreamClient,
  UpstreamClientOptions,
  Vendor,
} from './types.js';
