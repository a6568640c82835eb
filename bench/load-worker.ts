/**
 * The load generator, run as its own process by load.ts so that autocannon's event loop never
 * competes with the server's: on a 2-core machine the server gets one core and the generator
 * the other, identically for every target measured. Answers one message per LoadSpec.
 */
import autocannon from 'autocannon';
import type { LoadMessage, LoadSegment, LoadSpec } from './load-spec.js';

async function load(spec: LoadSpec): Promise<LoadSegment> {
  let times = new Float64Array(1 << 16);
  let count = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      { url: spec.url, headers: spec.headers, connections: spec.connections, pipelining: 1, duration: spec.durationS },
      (err: Error | null, res) => (err ? reject(err) : resolve(res)),
    );
    if (spec.discard) return;
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      if (count === times.length) {
        const grown = new Float64Array(times.length * 2);
        grown.set(times);
        times = grown;
      }
      times[count++] = responseTime;
    });
  });
  return {
    url: spec.url,
    durationS: (result.finish.getTime() - result.start.getTime()) / 1000,
    responses: spec.discard ? result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'] : count,
    non2xx: result.non2xx,
    errors: result.errors,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0])),
    bytes: result.throughput.total,
    times: times.slice(0, count),
  };
}

process.on('message', (spec: LoadSpec) => {
  load(spec).then(
    (segment) => process.send!({ ok: true, segment } satisfies LoadMessage),
    (err: Error) => process.send!({ ok: false, error: err.stack ?? err.message } satisfies LoadMessage),
  );
});
