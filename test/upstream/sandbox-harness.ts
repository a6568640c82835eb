import { Agent, type Dispatcher } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { createSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { createUpstreamClient, type UpstreamClient, type UpstreamClientOptions } from '../../src/upstream/index.js';
import { captureLogger, clientOptions, FAST_RETRY, PRIVATE_KEY, recordCalls, USERNAME } from './helpers.js';

/** The sandbox's call log entry as its control API shows it. */
export interface SandboxCall {
  seq: number;
  endpoint: string | null;
  method: string;
  path: string;
  http_status: number | null;
  provider_code: string | number | null;
  outcome: 'answered' | 'dropped' | 'hung';
  raw_body: string;
  authorization: 'missing' | 'bearer' | 'bare';
  token_header_present: boolean;
  transaction_id: string | null;
}

/** A real sandbox over real HTTP, driven and inspected through its control API. */
export interface Harness {
  sandbox: Sandbox;
  url: string;
  control(method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown>;
  calls(endpoint?: string): Promise<SandboxCall[]>;
  setFaults(faults: Record<string, unknown>): Promise<void>;
  expireTokens(): Promise<number>;
  client(overrides?: Partial<UpstreamClientOptions>): {
    client: UpstreamClient;
    log: ReturnType<typeof captureLogger>;
    records: ReturnType<typeof recordCalls>['records'];
  };
  close(): Promise<void>;
}

export async function startHarness(options: SandboxOptions = {}): Promise<Harness> {
  const sandbox = await createSandbox({ username: USERNAME, privateKey: PRIVATE_KEY, ...options });
  const url = await sandbox.listen({ port: 0 });
  const clients: UpstreamClient[] = [];

  async function control(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(`${sandbox.controlUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`sandbox control ${method} ${path}: HTTP ${res.status} ${await res.text()}`);
    return res.json();
  }

  return {
    sandbox,
    url,
    control,
    async calls(endpoint) {
      const query = endpoint ? `?endpoint=${endpoint}` : '';
      return ((await control('GET', `/calls${query}`)) as { calls: SandboxCall[] }).calls;
    },
    async setFaults(faults) {
      await control('PUT', '/faults', faults);
    },
    async expireTokens() {
      return ((await control('POST', '/tokens/expire')) as { expired: number }).expired;
    },
    client(overrides = {}) {
      const log = captureLogger();
      const { onCall, records } = recordCalls();
      const client = createUpstreamClient({ ...clientOptions(url, log.logger), retry: FAST_RETRY, onCall, ...overrides });
      clients.push(client);
      return { client, log, records };
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await sandbox.close();
    },
  };
}

/**
 * A harness for the enclosing describe block: started before each test (`'each'`) or once before
 * all of them (`'all'`), and closed after. The object answered is filled in by that hook, so
 * tests use it as the harness itself.
 */
export function useHarness(scope: 'each' | 'all', options: SandboxOptions = {}): Harness {
  const harness = {} as Harness;
  (scope === 'each' ? beforeEach : beforeAll)(async () => {
    Object.assign(harness, await startHarness(options));
  });
  (scope === 'each' ? afterEach : afterAll)(() => harness.close());
  return harness;
}

/**
 * A dispatcher that rewrites requests before they reach the real sandbox, to make it produce the
 * answers a correct client never provokes (wrong method, missing fields), and that remembers the
 * headers sent so tests can check secrets against logs.
 */
export function rewritingDispatcher(
  rewrite: (opts: Dispatcher.DispatchOptions) => Dispatcher.DispatchOptions = (o) => o,
): { dispatcher: Dispatcher; sentHeaders: Array<Record<string, string>>; close: () => Promise<void> } {
  const agent = new Agent();
  const sentHeaders: Array<Record<string, string>> = [];
  const dispatcher = agent.compose((dispatch) => (opts, handler) => {
    sentHeaders.push({ ...(opts.headers as Record<string, string>) });
    return dispatch(rewrite(opts), handler);
  });
  return { dispatcher, sentHeaders, close: () => agent.close() };
}
