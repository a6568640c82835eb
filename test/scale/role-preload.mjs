/**
 * Preloaded (NODE_OPTIONS=--import) into a `gateway serve` that test/crash/harness.ts starts, whose
 * `start()` always runs plain `serve` (every role). GATEWAY_TEST_ROLES=api,worker turns that into
 * `serve --role api --role worker`, so the scale-out test and the chaos suite can run each role as
 * its own process with the harness's environment (database, Redis prefix, sandbox, keys).
 */
const roles = (process.env.GATEWAY_TEST_ROLES ?? '').split(',').map((r) => r.trim()).filter(Boolean);
const at = process.argv.indexOf('serve');
if (roles.length > 0 && at >= 0) process.argv.splice(at + 1, 0, ...roles.flatMap((r) => ['--role', r]));
