/**
 * The provider's endpoints (upstream-api.md §4) and the two properties of each that drive the
 * client's behaviour: whether it needs the session token, and whether it changes provider state.
 */
export const ENDPOINTS = {
  login: { method: 'POST', path: '/api-service/card/login', authenticated: false, writes: false },
  getCardList: { method: 'GET', path: '/api-service/card/get-card-list', authenticated: true, writes: false },
  getCardDetailsList: {
    method: 'POST',
    path: '/api-service/card/get-card-details-list',
    authenticated: true,
    writes: false,
  },
  getBalance: { method: 'POST', path: '/api-service/card/get-balance-details', authenticated: true, writes: false },
  /** Reserves cards: a repeat could make a second reservation. */
  initiateCardRequest: {
    method: 'POST',
    path: '/api-service/card/initiate-card-request',
    authenticated: true,
    writes: true,
  },
  /** Issues card codes against a reservation: must never be sent twice by the client on its own. */
  confirmOrder: { method: 'POST', path: '/api-service/card/confirm-order', authenticated: true, writes: true },
} as const satisfies Record<string, EndpointSpec>;

export interface EndpointSpec {
  method: 'GET' | 'POST';
  path: string;
  authenticated: boolean;
  writes: boolean;
}

export type UpstreamEndpoint = keyof typeof ENDPOINTS;

export const UPSTREAM_ENDPOINTS = Object.keys(ENDPOINTS) as UpstreamEndpoint[];

/**
 * Joins the environment base URL and an endpoint path. Production's base carries a path segment
 * (`/production770`), so this must append rather than resolve (`new URL(path, base)` would drop
 * the segment because endpoint paths are absolute).
 */
export function endpointUrl(baseUrl: string, endpoint: UpstreamEndpoint): string {
  return `${baseUrl.replace(/\/+$/, '')}${ENDPOINTS[endpoint].path}`;
}
