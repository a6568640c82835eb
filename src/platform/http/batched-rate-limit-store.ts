import type { Redis } from '../redis.js';

/**
 * A store for @fastify/rate-limit that counts in Redis exactly as its RedisStore does (one shared
 * counter per key and window, so every instance sees every request and none can let a key past
 * its budget), but sends one command per key per event-loop turn instead of one per request.
 *
 * Requests of one key that arrive in the same turn (under load, many: the HTTP parser hands
 * several sockets' requests over in one poll phase) wait for one `INCRBY n`; Redis answers the
 * count after them, and the i-th of the n learns its exact position (count − n + 1 + i). Redis
 * applies each INCRBY atomically, so positions never overlap across instances: the decisions
 * are exactly those of one INCR per request, at a fraction of the commands, the Lua calls and
 * the Redis CPU. (An earlier version counted locally far from the limit; a review showed N
 * instances could then admit a burst of about N × 80% of the budget. Exact it is.)
 *
 * Keys and values are RedisStore's (same namespace; an integer with a PEXPIRE set when the window
 * starts), so old and new instances share counters during a deploy. `continueExceeding` and
 * `exponentialBackoff` are not supported (refused at construction).
 */

const INCR_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {count, ttl}
`;

const READ_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if not current then
  return {0, 0}
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  ttl = 0
end
return {tonumber(current), ttl}
`;

// Names of our own (not RedisStore's `rateLimit`/`rateLimitRead`, whose scripts differ).
const INCR_COMMAND = 'gatewayRateLimitIncrBy';
const READ_COMMAND = 'gatewayRateLimitRead';

/** The Redis connection with the two scripts defined on it (ioredis `defineCommand`). */
interface ScriptClient {
  [INCR_COMMAND](key: string, by: number, windowMs: number): Promise<[number, number]>;
  [READ_COMMAND](key: string): Promise<[number, number]>;
}

export interface RateLimitResult {
  current: number;
  /** Milliseconds until the window ends. */
  ttl: number;
}

export type RateLimitCallback = (err: Error | null, result?: RateLimitResult) => void;

/** The requests of one key waiting for this turn's INCRBY. */
interface Batch {
  readonly key: string;
  windowMs: number;
  readonly callbacks: RateLimitCallback[];
}

class Batcher {
  private readonly client: ScriptClient;
  /** This turn's batches, by full Redis key; sent together at the end of the turn. */
  private batches = new Map<string, Batch>();
  private scheduled = false;
  private readonly sends = new Set<Promise<void>>();
  /** Commands sent so far (tests and diagnostics: how well requests coalesce). */
  commandsSent = 0;

  constructor(redis: Redis) {
    const commands = redis as unknown as Partial<Record<string, unknown>>;
    if (typeof commands[INCR_COMMAND] !== 'function') redis.defineCommand(INCR_COMMAND, { numberOfKeys: 1, lua: INCR_SCRIPT });
    if (typeof commands[READ_COMMAND] !== 'function') redis.defineCommand(READ_COMMAND, { numberOfKeys: 1, lua: READ_SCRIPT });
    this.client = redis as unknown as ScriptClient;
  }

  incr(key: string, windowMs: number, cb: RateLimitCallback): void {
    let batch = this.batches.get(key);
    if (batch === undefined) {
      batch = { key, windowMs, callbacks: [] };
      this.batches.set(key, batch);
    }
    batch.windowMs = windowMs;
    batch.callbacks.push(cb);
    if (!this.scheduled) {
      this.scheduled = true;
      // After this turn's I/O callbacks: every request parsed in this poll phase joins.
      setImmediate(() => this.sendAll());
    }
  }

  async read(key: string): Promise<RateLimitResult> {
    const [current, ttl] = await this.client[READ_COMMAND](key);
    return { current, ttl };
  }

  /** Sends this turn's batches now and waits for every command in flight (never rejects). */
  async flush(): Promise<void> {
    this.sendAll();
    await Promise.all([...this.sends]);
  }

  private sendAll(): void {
    this.scheduled = false;
    const batches = this.batches;
    if (batches.size === 0) return;
    this.batches = new Map();
    for (const batch of batches.values()) this.send(batch);
  }

  private send({ key, windowMs, callbacks }: Batch): void {
    const n = callbacks.length;
    this.commandsSent++;
    const sent = this.client[INCR_COMMAND](key, n, windowMs).then(
      ([count, ttl]) => {
        const first = count - n + 1;
        for (let i = 0; i < n; i++) callbacks[i]!(null, { current: first + i, ttl });
      },
      (err: unknown) => {
        // The plugin's skipOnError lets these requests through; nothing is retried or logged here
        // (the connection logs its own state changes).
        const error = err instanceof Error ? err : new Error(String(err));
        for (const cb of callbacks) cb(error);
      },
    );
    this.sends.add(sent);
    void sent.finally(() => this.sends.delete(sent));
  }
}

/** One view of the shared batcher, with its own key prefix (the plugin's root store or a route's). */
export class BatchedRateLimitStore {
  constructor(
    private readonly batcher: Batcher,
    readonly prefix: string,
  ) {}

  /**
   * Full Redis keys by the plugin's key (an API key id): the same string object every request,
   * so the lookup reuses its cached hash instead of building `prefix + key` each time.
   */
  private readonly keys = new Map<string, string>();

  /** The plugin's call: it also passes `max`, which only the plugin compares (the count is exact). */
  incr(key: string, cb: RateLimitCallback, timeWindow: number, _max?: number): void {
    let full = this.keys.get(key);
    if (full === undefined) {
      full = this.prefix + key;
      // Bounded by the keys in use (the plugin's key is an API key id); cleared if it ever grows.
      if (this.keys.size >= MAX_REMEMBERED_KEYS) this.keys.clear();
      this.keys.set(key, full);
    }
    this.batcher.incr(full, timeWindow, cb);
  }

  /** Redis' count (GET + PTTL); does not count. */
  read(key: string, cb: RateLimitCallback): void {
    this.batcher.read(this.prefix + key).then(
      (result) => cb(null, result),
      (err: unknown) => cb(err instanceof Error ? err : new Error(String(err))),
    );
  }

  /**
   * A store for a route with its own rate-limit config; names its keys as RedisStore.child does.
   * The plugin passes its merged parameters with `routeInfo` (the route), whatever its types say.
   */
  child(routeOptions: object): BatchedRateLimitStore {
    const params = routeOptions as StoreParams & { routeInfo?: { method?: unknown; url?: unknown } };
    refuseUnsupported(params);
    const method = String(params.routeInfo?.method);
    const url = String(params.routeInfo?.url);
    return new BatchedRateLimitStore(this.batcher, `${this.prefix}${method}${url}-`);
  }
}

const MAX_REMEMBERED_KEYS = 10_000;

/** The plugin's parameters, as far as this store reads them. */
export interface StoreParams {
  continueExceeding?: unknown;
  exponentialBackoff?: unknown;
}

function refuseUnsupported(params: StoreParams | undefined): void {
  if (params?.continueExceeding === true || params?.exponentialBackoff === true) {
    throw new Error('the batched rate-limit store supports neither continueExceeding nor exponentialBackoff');
  }
}

export interface BatchedRateLimitOptions {
  redis: Redis;
  /** Key prefix in Redis; RedisStore's default when omitted. */
  nameSpace?: string;
}

export interface BatchedRateLimiter {
  /** For the plugin's `store` option: `new Store(globalParams)` gets a store on this batcher. */
  Store: new (params?: StoreParams) => BatchedRateLimitStore;
  /** A store on this batcher with the given prefix (the namespace by default). */
  store(prefix?: string): BatchedRateLimitStore;
  /** Redis commands sent so far. */
  commandsSent(): number;
  /** Sends what waits for the end of this turn and waits for every answer. Never rejects. */
  flush(): Promise<void>;
  /** The same as flush (there is no timer to stop). Never rejects. */
  close(): Promise<void>;
}

/**
 * Creates the batcher (one connection, this turn's batches) and a store class bound to it,
 * since @fastify/rate-limit instantiates the store itself. Close it when the app closes.
 */
export function createBatchedRateLimitStore(opts: BatchedRateLimitOptions): BatchedRateLimiter {
  const nameSpace = opts.nameSpace ?? 'fastify-rate-limit-';
  const batcher = new Batcher(opts.redis);
  class Store extends BatchedRateLimitStore {
    constructor(params?: StoreParams) {
      refuseUnsupported(params);
      super(batcher, nameSpace);
    }
  }
  return {
    Store,
    store: (prefix = nameSpace) => new BatchedRateLimitStore(batcher, prefix),
    commandsSent: () => batcher.commandsSent,
    flush: () => batcher.flush(),
    close: () => batcher.flush(),
  };
}
