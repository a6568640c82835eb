export {
  CALLBACK_EVENTS,
  buildCallbackPayload,
  callbackEventForStatus,
  serializeCallbackPayload,
  type CallbackData,
  type CallbackEvent,
  type CallbackFailure,
  type CallbackOrder,
  type CallbackPayload,
} from './callback-payload.js';
export {
  callbackOutboxData,
  enqueueCallbackDeliveries,
  insertCallbackOutbox,
  pendingCallbackDeliveries,
  requeuePendingCallbacks,
  type CallbackOutboxOrder,
  type EnqueueCallbackOptions,
  type PendingCallbackDelivery,
} from './callback-outbox.js';
export { DEFAULT_BACKOFF, DEFAULT_MAX_ATTEMPTS, callbackRetryDelay, type CallbackBackoff } from './callback-retry.js';
export {
  CALLBACK_USER_AGENT,
  CallbackAttemptError,
  DEFAULT_CALLBACK_TIMEOUT_MS,
  deliverCallback,
  startCallbackWorker,
  type CallbackJobResult,
  type CallbackWorkerDeps,
} from './callback-worker.js';
