// Browser module (served as is by console-plugin.ts); ESLint lints it with Node globals, so DOM globals are declared per file.
// The gateway's API as the console uses it: the support key (sessionStorage only, never
// localStorage, never a URL) goes in the Authorization header of every call; problems (RFC 9457)
// become ApiError with a message a person can read.

const KEY_ITEM = 'gateway-support-key';

export const session = {
  get key() {
    return sessionStorage.getItem(KEY_ITEM);
  },
  set(key) {
    sessionStorage.setItem(KEY_ITEM, key);
  },
  clear() {
    sessionStorage.removeItem(KEY_ITEM);
  },
};

export class ApiError extends Error {
  /**
   * @param {string} message readable text
   * @param {{ status?: number, code?: string, requestId?: string, problem?: unknown }} info
   */
  constructor(message, info = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = info.status ?? 0;
    this.code = info.code ?? 'network_error';
    this.requestId = info.requestId;
    this.problem = info.problem;
  }
}

/** A sentence for a problem document, by its stable code; the API's own detail where it is clear. */
export function problemMessage(status, problem) {
  const p = problem && typeof problem === 'object' ? problem : {};
  const detail = typeof p.detail === 'string' ? p.detail : '';
  switch (p.code) {
    case 'unauthorized':
      return 'Your support key is not valid or has been revoked. Sign in again with a current key.';
    case 'forbidden': {
      const scopes = Array.isArray(p.requiredScopes) ? p.requiredScopes.join(' or ') : '';
      return scopes ? `Your key is not allowed to do this (it needs ${scopes}).` : 'Your key is not allowed to do this.';
    }
    case 'rate_limited':
      return 'Too many requests with this key. Wait a minute and try again.';
    case 'validation_failed': {
      const errors = Array.isArray(p.errors) ? p.errors.map((e) => `${String(e.path).replace(/^(body|querystring|params)\/?/, '') || 'input'} ${e.message}`) : [];
      return errors.length > 0 ? `Some of what you entered was not accepted: ${errors.join('; ')}.` : 'Some of what you entered was not accepted.';
    }
    case 'order_not_found':
    case 'not_found':
      return 'No such order.';
    case 'order_not_actionable':
    case 'conflict':
    case 'bad_request':
      return detail || 'The gateway refused this request.';
    case 'internal_error':
      return 'The gateway hit an unexpected error. Give the reference below to an engineer.';
    case 'service_unavailable':
    case 'upstream_unavailable':
    case 'upstream_timeout':
      return 'The gateway or the provider is not available right now. Try again shortly.';
    default:
      return detail || `The gateway answered with an error (${status}).`;
  }
}

async function errorFrom(res) {
  let problem;
  try {
    problem = await res.json();
  } catch {
    problem = undefined;
  }
  return new ApiError(problemMessage(res.status, problem), {
    status: res.status,
    code: problem?.code ?? `http_${res.status}`,
    requestId: problem?.requestId ?? res.headers.get('x-request-id') ?? undefined,
    problem,
  });
}

/** Called when the key stops working (401), so the app can send the person back to sign in. */
let onUnauthorized = () => {};
export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

/**
 * One API call with the session's key (or `options.key`). Resolves with the Response when
 * `options.raw`, else with the parsed JSON; rejects with ApiError.
 */
export async function api(path, options = {}) {
  const key = options.key ?? session.key;
  const headers = { accept: options.accept ?? 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  const init = { method: options.method ?? 'GET', headers, credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer' };
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(options.body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError('The gateway could not be reached. Check your connection and try again.');
  }
  if (!res.ok) {
    const error = await errorFrom(res);
    if (res.status === 401 && !options.key) onUnauthorized(error);
    throw error;
  }
  if (options.raw) return res;
  return res.json();
}

/** `?a=1&b=2` from an object, skipping empty values. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** /readyz needs no key; it answers 503 with the same body when a critical check fails. */
export async function readiness() {
  const res = await fetch('/readyz', { cache: 'no-store', credentials: 'omit' });
  return res.json();
}

export const hasScope = (me, scope) => Boolean(me && (me.scopes.includes(scope) || me.scopes.includes('admin')));
