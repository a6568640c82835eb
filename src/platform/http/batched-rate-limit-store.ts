import type { Redis } from '../redis.js';

/**
 * A store for @fastify/rate-limit that counts in one Redis counter per key and window, shared by
 * every instance, where every admitted request holds its own position in the count (so no number
 * of instances can let a key past its budget), without a Redis round trip per request:
 *
 * - Requests of one key that arrive in the same event-loop turn wait for one `INCRBY n`; Redis
 *   applies it atomically and the i-th of the n gets position count − n + 1 + i.
 * - Far from the limit, that INCRBY also reserves a few positions more (LEASE_FRACTION of the
 *   budget): the next requests of that key on this instance take them in order, answered at
 *   once. Reserved positions count in Redis from the moment they are reserved, so other
 *   instances see them as used; a reservation can only make a key reach its limit *earlier*
 *   (by what instances hold unused: at most LEASE_FRACTION × budget each, and reservations stop
 *   once a key's count passes EXACT_FROM of its budget), never let it past. Positions still
 *   unused when the window ends are dropped with it.
 * - Every position beyond the budget is a refusal, exactly as RedisStore's INCR past `max`.
 *
 * (An earlier version counted locally and sent the counts later; a review showed N instances
 * could then admit a burst of about N × 80% of the budget. Positions are handed out by Redis now.)
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

/** Far from the limit, each INCRBY reserves this fraction of the budget for later requests of the key. */
export const LEASE_FRACTION = 0.05;
/** From this fraction of the budget on (and for budgets under MIN_LEASED_MAX), nothing is reserved. */
export const EXACT_FROM = 0.8;
/** Smaller budgets are counted request by request (per turn): 5% of them is not worth holding. */
export const MIN_LEASED_MAX = 100;

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

/** One key's state on this instance. */
interface Bucket {
  readonly key: string;
  windowMs: number;
  max: number;
  /** Requests waiting for the next INCRBY. */
  waiting: RateLimitCallback[];
  /** An INCRBY is on its way (the waiting requests then go with the next one). */
  sending: boolean;
  /** Reserved positions not handed out yet: next..last. */
  next: number;
  last: number;
  /** Local time the window ends (from PTTL, measured from when the command was sent). */
  deadline: number;
}

class Batcher {
  private readonly client: ScriptClient;
  private readonly buckets = new Map<string, Bucket>();
  /** Keys with requests waiting for the end of this turn. */
  private due = new Set<Bucket>();
  private scheduled = false;
  private readonly sends = new Set<Promise<void>>();
  /** Commands sent so far (tests and diagnostics: how well requests coalesce). */
  commandsSent = 0;

  constructor(
    redis: Redis,
    private readonly now: () => number,
  ) {
    const commands = redis as unknown as Partial<Record<string, unknown>>;
    if (typeof commands[INCR_COMMAND] !== 'function') redis.defineCommand(INCR_COMMAND, { numberOfKeys: 1, lua: INCR_SCRIPT });
    if (typeof commands[READ_COMMAND] !== 'function') redis.defineCommand(READ_COMMAND, { numberOfKeys: 1, lua: READ_SCRIPT });
    this.client = redis as unknown as ScriptClient;
  }

  bucketFor(key: string): Bucket {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      if (this.buckets.size >= MAX_BUCKETS) this.dropIdle();
      bucket = { key, windowMs: 0, max: 0, waiting: [], sending: false, next: 1, last: 0, deadline: -Infinity };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  incr(bucket: Bucket, windowMs: number, max: number, cb: RateLimitCallback): void {
    bucket.windowMs = windowMs;
    bucket.max = max;
    const now = this.now();
    if (bucket.next <= bucket.last && now < bucket.deadline && bucket.waiting.length === 0) {
      // A position this instance reserved earlier in this window.
      cb(null, { current: bucket.next++, ttl: bucket.deadline - now });
      return;
    }
    bucket.waiting.push(cb);
    if (!bucket.sending) this.due.add(bucket);
    if (!this.scheduled) {
      this.scheduled = true;
      // After this turn's I/O callbacks: every request parsed in this poll phase joins.
      setImmediate(() => this.sendDue());
    }
  }

  async read(key: string): Promise<RateLimitResult> {
    const [current, ttl] = await this.client[READ_COMMAND](key);
    // Positions this instance reserved but has not handed out are not requests.
    const bucket = this.buckets.get(key);
    const unused = bucket !== undefined && this.now() < bucket.deadline ? Math.max(0, bucket.last - bucket.next + 1) : 0;
    return { current: Math.max(0, current - unused), ttl };
  }

  /** Sends what waits for the end of this turn and waits for every command in flight (never rejects). */
  async flush(): Promise<void> {
    // Requests that arrive while a command is out are due once it answers: send those too.
    for (;;) {
      this.sendDue();
      if (this.sends.size === 0) return;
      await Promise.all([...this.sends]);
    }
  }

  private sendDue(): void {
    this.scheduled = false;
    const due = this.due;
    if (due.size === 0) return;
    this.due = new Set();
    for (const bucket of due) this.send(bucket);
  }

  private send(bucket: Bucket): void {
    const waiting = bucket.waiting;
    bucket.waiting = [];
    bucket.sending = true;
    // Reserve more only far from the limit, judged by the count this instance last saw.
    const farFromLimit = bucket.max >= MIN_LEASED_MAX && bucket.last < bucket.max * EXACT_FROM;
    const reserve = farFromLimit ? Math.ceil(bucket.max * LEASE_FRACTION) : 0;
    const n = waiting.length + reserve;
    const sentAt = this.now();
    this.commandsSent++;
    const sent = this.client[INCR_COMMAND](bucket.key, n, bucket.windowMs).then(
      ([count, ttl]) => {
        const first = count - n + 1;
        // The reserved positions follow the waiting requests' (a new window drops old ones).
        bucket.next = first + waiting.length;
        bucket.last = count;
        bucket.deadline = sentAt + ttl;
        for (let i = 0; i < waiting.length; i++) waiting[i]!(null, { current: first + i, ttl });
      },
      (err: unknown) => {
        // The plugin's skipOnError lets these requests through; nothing is retried or logged
        // here (the connection logs its own state changes).
        const error = err instanceof Error ? err : new Error(String(err));
        for (const cb of waiting) cb(error);
      },
    );
    const done = sent.finally(() => {
      this.sends.delete(done);
      bucket.sending = false;
      // Requests that came while this command was out go with the next one.
      if (bucket.waiting.length > 0) {
        this.due.add(bucket);
        if (!this.scheduled) {
          this.scheduled = true;
          setImmediate(() => this.sendDue());
        }
      }
    });
    this.sends.add(done);
  }

  /** Forgets keys with nothing reserved, waiting or on its way (bounds the map). */
  private dropIdle(): void {
    const now = this.now();
    for (const [key, bucket] of this.buckets) {
      const holds = bucket.next <= bucket.last && now < bucket.deadline;
      if (!holds && !bucket.sending && bucket.waiting.length === 0) this.buckets.delete(key);
    }
  }
}

/** Keys remembered at once before idle ones are dropped (the plugin's key is an API key id). */
const MAX_BUCKETS = 10_000;

/** One view of the shared batcher, with its own key prefix (the plugin's root store or a route's). */
export class BatchedRateLimitStore {
  constructor(
    private readonly batcher: Batcher,
    readonly prefix: string,
  ) {}

  /**
   * Buckets by the plugin's key (an API key id): the same string object every request, so the
   * lookup reuses its cached hash instead of building `prefix + key` each time.
   */
  private readonly local = new Map<string, Bucket>();

  incr(key: string, cb: RateLimitCallback, timeWindow: number, max: number): void {
    let bucket = this.local.get(key);
    if (bucket === undefined) {
      bucket = this.batcher.bucketFor(this.prefix + key);
      if (this.local.size >= MAX_BUCKETS) this.local.clear();
      this.local.set(key, bucket);
    }
    this.batcher.incr(bucket, timeWindow, max, cb);
  }

  /** Redis' count (GET + PTTL) less the positions this instance reserved and has not used; does not count. */
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
  /** Clock for window ends, in ms (default performance.now); tests inject their own. */
  now?: () => number;
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
  /** The same as flush (there is no timer to stop; unused reservations lapse with their window). Never rejects. */
  close(): Promise<void>;
}

/**
 * Creates the batcher (one connection, this turn's batches) and a store class bound to it,
 * since @fastify/rate-limit instantiates the store itself. Close it when the app closes.
 */
export function createBatchedRateLimitStore(opts: BatchedRateLimitOptions): BatchedRateLimiter {
  const nameSpace = opts.nameSpace ?? 'fastify-rate-limit-';
  const batcher = new Batcher(opts.redis, opts.now ?? (() => performance.now()));
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
