import { Queue } from 'bullmq';
import { confirmations, type CrashRig } from '../test/crash/harness.js';
import { ALLOW_PG_RESTART, ALLOW_REDIS_RESTART } from './options.js';
import { foreignPgSessions, restartPostgres, restartRedis, restartRefusal } from './outages.js';
import { isAlive, startTopology, type Topology } from './topology.js';

export const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
const between = (min: number, max: number) => min + Math.floor(Math.random() * (max - min));

export interface ScenarioContext {
  rig: CrashRig;
  orders: number;
  /** Notes the scenario wants printed under the table (what it did: kills, storms, restarts). */
  note(text: string): void;
  /** Set by the scenario: the processes it runs (for the plaintext scan of their logs). */
  topology?: Topology;
}

export interface Scenario {
  name: string;
  /** Why the scenario does not run (an opt-in flag is missing), checked before any set-up. */
  skip?: () => string | undefined;
  run(ctx: ScenarioContext): Promise<void>;
}

async function start(ctx: ScenarioContext, options: Parameters<typeof startTopology>[1] = {}): Promise<Topology> {
  const topology = await startTopology(ctx.rig, options);
  ctx.topology = topology;
  return topology;
}

/** Every placed order acknowledged (retrying through a live API), then every order terminal. */
async function settle(ctx: ScenarioContext, topology: Topology, timeoutMs = 120_000): Promise<void> {
  if (!isAlive(topology.api)) await topology.restart('api');
  await ctx.rig.retryUnacknowledged(topology.api).catch((err: Error) => ctx.note(err.message));
  const settled = await ctx.rig.waitSettled(timeoutMs);
  if (!settled) {
    ctx.note(`not settled within ${timeoutMs / 1000} s`);
    await describeUnsettled(ctx);
  }
}

/** For each order left unsettled: where it stopped and what BullMQ knows about its job. */
async function describeUnsettled(ctx: ScenarioContext): Promise<void> {
  const { rig } = ctx;
  const open = await rig.prisma.order.findMany({
    where: { status: { notIn: ['fulfilled', 'failed', 'needs_attention'] } },
    select: { id: true, status: true, statusDetail: true, updatedAt: true, leaseOwner: true, leaseUntil: true },
    take: 5,
  });
  const queue = new Queue('order-pipeline', { connection: rig.redis, prefix: rig.prefix });
  try {
    for (const o of open) {
      const state = await queue.getJobState(o.id);
      const hash = await rig.redis.hgetall(`${rig.prefix}:order-pipeline:${o.id}`);
      ctx.note(
        `unsettled ${o.id}: ${o.status} (${o.statusDetail ?? ''}), updated ${o.updatedAt.toISOString()}, lease ${o.leaseOwner ?? 'none'}; ` +
          `job state '${state}', job hash ${Object.keys(hash).length > 0 ? `present (${Object.keys(hash).join(',')})` : 'absent'}`,
      );
    }
  } finally {
    await queue.close();
  }
}

const workerKills: Scenario = {
  name: 'SIGKILL workers at random moments',
  async run(ctx) {
    const { rig } = ctx;
    // Slow enough provider calls that a kill often lands while one is in flight.
    rig.sandbox.control.setFaults({ latencyMs: 150 });
    const topology = await start(ctx, { workers: 2, workerConcurrency: 10 });
    let stop = false;
    let kills = 0;
    const restarting = new Set<number>();
    const restarts: Promise<void>[] = [];
    const killer = (async () => {
      while (!stop) {
        await delay(between(300, 1_500));
        // Any worker that is up (a killed one is restarted in the background meanwhile).
        const live = topology.workers.map((w, i) => ({ w, i })).filter(({ w, i }) => isAlive(w) && !restarting.has(i));
        if (stop || live.length === 0) continue;
        const { i } = live[between(0, live.length)]!;
        restarting.add(i);
        kills++;
        restarts.push(topology.killAndRestartWorker(i, 'chaos: SIGKILL worker').finally(() => restarting.delete(i)));
      }
    })();
    await rig.placeOrders(topology.api, ctx.orders, 15_000);
    await delay(4_000);
    stop = true;
    await killer;
    await Promise.all(restarts);
    ctx.note(`${kills} worker SIGKILLs at random moments (each worker restarted), orders spread over 15 s, provider latency 150 ms`);
    await settle(ctx, topology);
  },
};

const redisKeysLost: Scenario = {
  name: 'Redis data lost (this run\'s keys deleted) x2',
  async run(ctx) {
    const { rig } = ctx;
    rig.sandbox.control.setFaults({ latencyMs: 50 });
    // Few workers, so most orders wait in the queue when their jobs vanish.
    const topology = await start(ctx, { workers: 2, workerConcurrency: 3 });
    const first = confirmations(rig, Math.ceil(ctx.orders * 0.2));
    const second = confirmations(rig, Math.ceil(ctx.orders * 0.5));
    const placing = rig.placeOrders(topology.api, ctx.orders, 6_000);
    await first;
    const deleted1 = await rig.loseRedisData();
    await second;
    const deleted2 = await rig.loseRedisData();
    await placing;
    ctx.note(`deleted ${deleted1} then ${deleted2} keys under ${rig.prefix}:* (SCAN+DEL, what FLUSHALL means to this gateway)`);
    await settle(ctx, topology);
  },
};

const redisRestart: Scenario = {
  name: 'Redis restarted (shutdown nosave)',
  skip: () => (ALLOW_REDIS_RESTART ? undefined : 'CHAOS_ALLOW_REDIS_RESTART=1 not set (restarts the machine\'s shared Redis)'),
  async run(ctx) {
    const { rig } = ctx;
    rig.sandbox.control.setFaults({ latencyMs: 50 });
    const topology = await start(ctx, { workers: 2, workerConcurrency: 3 });
    const some = confirmations(rig, Math.ceil(ctx.orders * 0.3));
    const placing = rig.placeOrders(topology.api, ctx.orders, 8_000);
    await some;
    const refusal = await restartRefusal('redis', topology.pids);
    if (refusal) throw new Error(`refused to restart Redis: ${refusal}`);
    await restartRedis(2_000);
    await placing;
    const dead = [topology.api, topology.scheduler, ...topology.workers].filter((p) => !isAlive(p)).length;
    ctx.note(`Redis shut down without saving, down ~2 s, started again empty; ${dead} gateway process(es) exited`);
    // A process that gave up on Redis is restarted, as its supervisor would.
    if (!isAlive(topology.scheduler)) await topology.restart('scheduler');
    for (let i = 0; i < topology.workers.length; i++) if (!isAlive(topology.workers[i]!)) await topology.restart({ worker: i });
    await settle(ctx, topology);
  },
};

const postgresRestart: Scenario = {
  name: 'PostgreSQL restarted',
  skip: () => (ALLOW_PG_RESTART ? undefined : 'CHAOS_ALLOW_PG_RESTART=1 not set (restarts the machine\'s shared PostgreSQL)'),
  async run(ctx) {
    const { rig } = ctx;
    rig.sandbox.control.setFaults({ latencyMs: 50 });
    const topology = await start(ctx, { workers: 2, workerConcurrency: 5 });
    const some = confirmations(rig, Math.ceil(ctx.orders * 0.3));
    const placing = rig.placeOrders(topology.api, ctx.orders, 8_000);
    await some;
    const refusal = await restartRefusal('postgres', topology.pids);
    if (refusal) throw new Error(`refused to restart PostgreSQL: ${refusal}`);
    const own = await rig.prisma.$queryRaw<{ db: string }[]>`SELECT current_database() AS db`;
    const foreign = await foreignPgSessions([own[0]!.db]);
    if (foreign > 0) throw new Error(`refused to restart PostgreSQL: ${foreign} session(s) from outside this run`);
    await restartPostgres();
    await placing;
    const dead = [topology.api, topology.scheduler, ...topology.workers].filter((p) => !isAlive(p)).length;
    ctx.note(`pg_ctlcluster 15 main restart mid-run; ${dead} gateway process(es) exited`);
    // The rig's own pool reconnects on its next query; give it a moment.
    for (let i = 0; i < 50; i++) {
      if (await rig.prisma.$queryRaw`SELECT 1`.then(() => true, () => false)) break;
      await delay(200);
    }
    if (!isAlive(topology.scheduler)) await topology.restart('scheduler');
    for (let i = 0; i < topology.workers.length; i++) if (!isAlive(topology.workers[i]!)) await topology.restart({ worker: i });
    await settle(ctx, topology);
  },
};

const ORDER_ENDPOINTS = ['login', 'get-balance-details', 'initiate-card-request', 'confirm-order'] as const;

const errorStorms: Scenario = {
  name: 'provider: 10001 storms on each endpoint',
  async run(ctx) {
    const { rig } = ctx;
    rig.sandbox.control.setFaults({ latencyMs: 20 });
    const topology = await start(ctx, { workers: 2, workerConcurrency: 10 });
    const placing = rig.placeOrders(topology.api, ctx.orders, 12_000);
    // Each endpoint in turn answers every call with 10001 for 2 s (logins included: expire the
    // tokens first so the gateway has to log in during the login storm).
    for (const endpoint of ORDER_ENDPOINTS) {
      await delay(1_000);
      if (endpoint === 'login') rig.sandbox.control.expireTokens();
      rig.sandbox.control.setFaults({ latencyMs: 20, errorRate: { [endpoint]: 1 } });
      await delay(2_000);
      rig.sandbox.control.setFaults({ latencyMs: 20 });
    }
    await placing;
    const storms = rig.sandbox.state.calls.filter((c) => c.providerCode === 10001 || c.providerCode === '10001').length;
    ctx.note(`2 s storms of 10001 on ${ORDER_ENDPOINTS.join(', ')} in turn: ${storms} calls answered 10001`);
    await settle(ctx, topology);
  },
};

function afterCommitScenario(action: 'hang' | 'drop', label: string): Scenario {
  return {
    name: `provider: ${label} after commit`,
    async run(ctx) {
      const { rig } = ctx;
      rig.sandbox.control.setFaults({ latencyMs: 20 });
      const topology = await start(ctx, { workers: 2, workerConcurrency: 10 });
      const placing = rig.placeOrders(topology.api, ctx.orders, 10_000);
      // Twice during the run, each committing endpoint does the work and then fails to answer, 3 calls each time.
      for (let round = 0; round < 2; round++) {
        await delay(3_000);
        rig.sandbox.control.setFaults({ latencyMs: 20, afterCommit: { 'initiate-card-request': { action, times: 3 }, 'confirm-order': { action, times: 3 } } });
      }
      await placing;
      const unanswered = rig.sandbox.state.calls.filter((c) => c.outcome !== 'answered').length;
      ctx.note(`${label}: ${unanswered} committed provider calls never answered (UPSTREAM_TIMEOUT_MS=5000)`);
      await settle(ctx, topology);
    },
  };
}

const tokenExpiry: Scenario = {
  name: 'provider: token expiry mid-run',
  async run(ctx) {
    const { rig } = ctx;
    rig.sandbox.control.setFaults({ latencyMs: 20 });
    const topology = await start(ctx, { workers: 2, workerConcurrency: 10 });
    let stop = false;
    let expired = 0;
    const expirer = (async () => {
      while (!stop) {
        await delay(between(300, 1_200));
        expired += rig.sandbox.control.expireTokens();
      }
    })();
    await rig.placeOrders(topology.api, ctx.orders, 10_000);
    stop = true;
    await expirer;
    const rejected = rig.sandbox.state.calls.filter((c) => c.providerCode === 10000 || c.providerCode === '10000').length;
    ctx.note(`token expiry: ${expired} tokens expired, ${rejected} calls answered 10000, ${rig.sandbox.state.calls.filter((c) => c.endpoint === 'login').length} logins`);
    await settle(ctx, topology);
  },
};

export const SCENARIOS: Scenario[] = [
  workerKills,
  redisKeysLost,
  redisRestart,
  postgresRestart,
  errorStorms,
  afterCommitScenario('hang', 'hangs'),
  afterCommitScenario('drop', 'resets (dropped answers)'),
  tokenExpiry,
];
