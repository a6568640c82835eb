/**
 * The provider sandbox: a faithful in-memory simulator of the gift-card provider
 * (/work/shared/upstream-api.md), with fault injection, signed webhooks and a control API.
 * See docs/sandbox.md.
 */
export { createSandbox, normaliseBasePath, DEFAULT_RESERVATION_TTL_MS, DEFAULT_TOKEN_TTL_MS, type Sandbox, type SandboxOptions } from './create-sandbox.js';
export { runSandboxCommand, type RunningSandbox, type SandboxCommandOptions } from './command.js';
export { loadCatalogSeed, DEFAULT_CATALOG_PATH, type SandboxCatalogSeed, type CatalogSeed } from './catalog.js';
export { CONTROL_PREFIX } from './control-routes.js';
export type { SandboxControl } from './control-service.js';
export type { SandboxEvents, SandboxEventMap } from './events.js';
export type { SandboxState } from './state.js';
export { PROVIDER_ERRORS, PROVIDER_ERROR_CODES, SUCCESS_CODE, MAPPED_HTTP_STATUS, type ProviderErrorCode } from './provider-codes.js';
export { ENDPOINTS } from './types.js';
export type {
  AfterCommitAction,
  AfterCommitFault,
  BehaviourSettings,
  BusyState,
  CallRecord,
  CommittingEndpoint,
  Confirmation,
  Endpoint,
  FaultSettings,
  IssuedCard,
  Reservation,
  ReservationStatus,
} from './types.js';
export type { DeliveryAttempt, ReleaseOrder, WebhookEventRecord, WebhookSettings, WebhookType } from './webhook-dispatcher.js';
