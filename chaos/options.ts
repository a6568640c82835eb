/**
 * The suite's switches, read once here (the gateway reads its configuration through src/config;
 * the chaos runner is a test tool with its own few variables, documented in docs/chaos.md).
 */
// eslint-disable-next-line no-restricted-properties -- the runner's own switches, not gateway configuration
const env = process.env;

export const CHAOS_ORDERS = Number(env.CHAOS_ORDERS ?? 100);
/** Scenario name fragments to run (comma-separated); empty = all. */
export const CHAOS_ONLY = (env.CHAOS_ONLY ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
export const ALLOW_REDIS_RESTART = env.CHAOS_ALLOW_REDIS_RESTART === '1';
export const ALLOW_PG_RESTART = env.CHAOS_ALLOW_PG_RESTART === '1';
