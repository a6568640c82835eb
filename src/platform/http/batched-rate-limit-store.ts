import type { Redis } from '../redis.js';

/**
 * A store for @fastify/rate-limit that keeps the counters in Redis, shared by every instance, but
 * does not pay a Redis round trip per request while a bucket is far from its limit.
 *
 * Per bucket (one Redis key) an instance keeps: the count it last saw in Redis, the increments in
 * flight, the increments pending (counted here, not sent yet), and the window's end as a local
 * deadline (from PTTL, measured from when the command was sent, so it is never later than Redis').
 *
 * - Local path: when the bucket's state is fresh (window not ended, last answer from Redis at most
 *   SYNC_MAX_AGE_MS old) and the estimate (seen + in flight + pending + 1) is at most
 *   LOCAL_FRACTION of `max` (and `max` is at least MIN_BATCHED_MAX), the request is counted here
 *   and answered synchronously. One unref'd timer per store sends the pending counts every
 *   FLUSH_INTERVAL_MS (one INCRBY script per bucket, auto-pipelined by the producer connection).
 * - Exact path: otherwise (no state, window ended, stale, or near the limit) the request goes to
 *   Redis at once, carrying the bucket's pending counts with it, and is answered from Redis' count.
 *   Near the limit, and for small limits, every decision is therefore exact, as with RedisStore.
 *
 * Bound: a count answered on the local path misses only (a) what other instances counted and have
 * not flushed yet, at most FLUSH_INTERVAL_MS (plus a round trip) of their traffic on that key, and
 * (b) what reached Redis since this instance's last answer, at most SYNC_MAX_AGE_MS old. So it is
 * low by at most ~300 ms of the *other* instances' traffic on that key. No request is let past
 * `max` unless that traffic exceeds the (1 - LOCAL_FRACTION) headroom, and then only by the excess.
 * Also: an instance that dies loses its unflushed counts (≤ FLUSH_INTERVAL_MS of its traffic), and
 * a batch whose reply is lost after Redis applied it is sent again (over-counting, the safe side).
 *
 * Keys and values are those of @fastify/rate-limit's RedisStore (same namespace, an integer with a
 * PEXPIRE set when the window starts), so old and new instances share counters during a deploy.
 * `continueExceeding` and `exponentialBackoff` are not supported (refused at construction).
 */

/** How often pending counts are sent to Redis; also the bound on how late other instances see them. */
export const FLUSH_INTERVAL_MS = 100;
/**
 * Count locally only while the estimate is at most this fraction of `max`. The rest of the budget
 * (20%) is headroom for what this instance cannot see yet (other instances' unflushed counts): as
 * long as they add less than that within the bound above, no request is admitted over `max`, and
 * every decision in the last 20% is made by Redis, exactly.
 */
export const LOCAL_FRACTION = 0.8;
/**
 * Below this `max` every request goes to Redis: the headroom (max × 0.2 < 20 requests) is too small
 * to absorb other instances' unflushed counts, and small limits are where exactness matters most.
 */
export const MIN_BATCHED_MAX = 100;
/**
 * The local path trusts the last count seen in Redis for at most this long; after that the next
 * request goes to Redis (refreshing it). Twice the flush interval, so that under steady traffic the
 * flushes keep the state fresh even when the timer fires somewhat late.
 */
export const SYNC_MAX_AGE_MS = 2 * FLUSH_INTERVAL_MS;

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

interface Bucket {
  /** Full Redis key. */
  readonly key: string;
  /** Window length, for PEXPIRE when a flush starts a window. */
  windowMs: number;
  /** Count in Redis in the last applied answer. */
  seen: number;
  /** Increments sent, not answered yet. */
  inFlight: number;
  /** Increments counted here, not sent yet. */
  pending: number;
  /** Local time the window ends; -Infinity until Redis answered. */
  deadline: number;
  /** Local time the command of the last applied answer was sent. */
  syncedAt: number;
  /** Sequence number of the last applied answer (answers arrive in order; this is a guard). */
  appliedSeq: number;
  /** Set when the batcher drops the bucket; a store view holding it then looks it up again. */
  dropped: boolean;
}

class Batcher {
  private readonly client: ScriptClient;
  private readonly buckets = new Map<string, Bucket>();
  private readonly sends = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;
  private closed = false;

  constructor(
    redis: Redis,
    readonly now: () => number,
    private readonly flushIntervalMs: number,
  ) {
    const commands = redis as unknown as Partial<Record<string, unknown>>;
    if (typeof commands[INCR_COMMAND] !== 'function') redis.defineCommand(INCR_COMMAND, { numberOfKeys: 1, lua: INCR_SCRIPT });
    if (typeof commands[READ_COMMAND] !== 'function') redis.defineCommand(READ_COMMAND, { numberOfKeys: 1, lua: READ_SCRIPT });
    this.client = redis as unknown as ScriptClient;
  }

  /** The bucket of a full Redis key, created when missing. */
  bucketFor(key: string): Bucket {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { key, windowMs: 0, seen: 0, inFlight: 0, pending: 0, deadline: -Infinity, syncedAt: -Infinity, appliedSeq: 0, dropped: false };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  incrBucket(bucket: Bucket, windowMs: number, max: number, cb: RateLimitCallback): void {
    const now = this.now();
    if (
      !this.closed &&
      max >= MIN_BATCHED_MAX &&
      this.isFresh(bucket, now) &&
      bucket.seen + bucket.inFlight + bucket.pending + 1 <= max * LOCAL_FRACTION
    ) {
      bucket.pending += 1;
      bucket.windowMs = windowMs;
      this.schedule();
      cb(null, { current: bucket.seen + bucket.inFlight + bucket.pending, ttl: bucket.deadline - now });
      return;
    }

    if (now >= bucket.deadline) {
      // Counted in a window that has ended: they would only inflate the next one.
      bucket.pending = 0;
    }
    bucket.windowMs = windowMs;
    const carried = bucket.pending;
    bucket.pending = 0;
    const answered = this.send(bucket, carried + 1, carried);
    void answered.then((outcome) => (outcome instanceof Error ? cb(outcome) : cb(null, outcome)));
  }

  async read(key: string): Promise<RateLimitResult> {
    // Pending counts as of now: those sent later reach Redis after this GET, so none is counted twice.
    const now = this.now();
    const bucket = this.buckets.get(key);
    const live = bucket !== undefined && now < bucket.deadline;
    const pending = live ? bucket.pending : 0;
    const [current, ttl] = await this.client[READ_COMMAND](key);
    // The key may be gone while counts made in its window wait here: report the local window.
    if (ttl === 0 && pending > 0 && live) return { current: current + pending, ttl: Math.max(0, bucket.deadline - now) };
    return { current: current + pending, ttl };
  }

  /** Sends every pending count and waits for every command in flight (never rejects). */
  async flush(): Promise<void> {
    this.sendPending();
    await Promise.all([...this.sends]);
  }

  /** Final flush; stops the timer. Later requests all go to Redis. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private isFresh(bucket: Bucket, now: number): boolean {
    return now < bucket.deadline && now - bucket.syncedAt <= SYNC_MAX_AGE_MS;
  }

  /**
   * Sends `count` increments of `bucket` (`carried` of them were pending, put back on failure).
   * Resolves with Redis' answer or the error; never rejects.
   */
  private send(bucket: Bucket, count: number, carried: number): Promise<RateLimitResult | Error> {
    const seq = ++this.seq;
    const sentAt = this.now();
    bucket.inFlight += count;
    const answer = this.client[INCR_COMMAND](bucket.key, count, bucket.windowMs).then(
      ([current, pttl]): RateLimitResult => {
        bucket.inFlight -= count;
        if (seq > bucket.appliedSeq) {
          bucket.appliedSeq = seq;
          bucket.seen = current;
          bucket.deadline = sentAt + pttl;
          bucket.syncedAt = sentAt;
        }
        return { current, ttl: pttl };
      },
      (err: unknown): Error => {
        bucket.inFlight -= count;
        // Kept for the next flush while their window lasts; never thrown, never logged here (the
        // connection logs its state changes).
        if (carried > 0 && this.now() < bucket.deadline) bucket.pending += carried;
        return err instanceof Error ? err : new Error(String(err));
      },
    );
    const tracked = answer.then(() => undefined);
    this.sends.add(tracked);
    void tracked.then(() => this.sends.delete(tracked));
    // The timer also drops the bucket once it is stale and idle.
    this.schedule();
    return answer;
  }

  /** Sends each bucket's pending counts; drops buckets that are stale with nothing in flight. */
  private sendPending(): void {
    const now = this.now();
    for (const [key, bucket] of this.buckets) {
      if (now >= bucket.deadline) bucket.pending = 0;
      if (bucket.pending > 0) {
        const count = bucket.pending;
        bucket.pending = 0;
        void this.send(bucket, count, count);
      } else if (bucket.inFlight === 0 && !this.isFresh(bucket, now)) {
        this.buckets.delete(key);
        bucket.dropped = true;
      }
    }
  }

  private schedule(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sendPending();
      // While any bucket remains (pending, in flight, or fresh state to expire later).
      if (this.buckets.size > 0) this.schedule();
    }, this.flushIntervalMs);
    this.timer.unref();
  }
}

/** One view of the shared batcher, with its own key prefix (the plugin's root store or a route's). */
export class BatchedRateLimitStore {
  constructor(
    private readonly batcher: Batcher,
    readonly prefix: string,
  ) {}

  /**
   * This view's buckets by the plugin's key (an API key id): the same string object every request,
   * so the lookup reuses its cached hash instead of building and hashing `prefix + key` each time.
   */
  private readonly local = new Map<string, Bucket>();

  incr(key: string, cb: RateLimitCallback, timeWindow: number, max: number): void {
    let bucket = this.local.get(key);
    if (bucket === undefined || bucket.dropped) {
      bucket = this.batcher.bucketFor(this.prefix + key);
      this.local.set(key, bucket);
    }
    this.batcher.incrBucket(bucket, timeWindow, max, cb);
  }

  /** Redis' count (GET + PTTL) plus this instance's pending increments; does not count. */
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
  /** Clock for windows and freshness, in ms (default performance.now); tests inject their own. */
  now?: () => number;
  flushIntervalMs?: number;
}

export interface BatchedRateLimiter {
  /** For the plugin's `store` option: `new Store(globalParams)` gets a store on this batcher. */
  Store: new (params?: StoreParams) => BatchedRateLimitStore;
  /** A store on this batcher with the given prefix (the namespace by default). */
  store(prefix?: string): BatchedRateLimitStore;
  /** Sends every pending count now and waits for the answers. Never rejects. */
  flush(): Promise<void>;
  /** Final flush and stops the timer. Never rejects. */
  close(): Promise<void>;
}

/**
 * Creates the batcher (one timer, one connection, one bucket map) and a store class bound to it,
 * since @fastify/rate-limit instantiates the store itself. Close it when the app closes.
 */
export function createBatchedRateLimitStore(opts: BatchedRateLimitOptions): BatchedRateLimiter {
  const nameSpace = opts.nameSpace ?? 'fastify-rate-limit-';
  const batcher = new Batcher(opts.redis, opts.now ?? (() => performance.now()), opts.flushIntervalMs ?? FLUSH_INTERVAL_MS);
  class Store extends BatchedRateLimitStore {
    constructor(params?: StoreParams) {
      refuseUnsupported(params);
      super(batcher, nameSpace);
    }
  }
  return {
    Store,
    store: (prefix = nameSpace) => new BatchedRateLimitStore(batcher, prefix),
    flush: () => batcher.flush(),
    close: () => batcher.close(),
  };
}
