import { describe, expect, it } from 'vitest';
import { PRIVATE_KEY } from './helpers.js';
import { rewritingDispatcher, useHarness } from './sandbox-harness.js';

/**
 * Secrets never reach logs, errors or call records: checked on real pino output (through a
 * stream) over a full purchase against the sandbox, including a re-login and a failing call.
 */
describe('logging and call records', () => {
  const h = useHarness('all');

  it('one debug line per HTTP attempt, with no key, token or card code anywhere', async () => {
    const rw = rewritingDispatcher();
    const { client, log, records } = h.client({ dispatcher: rw.dispatcher });

    const { transactionId } = await client.initiateCardRequest({ cardId: '301', quantity: 2, transactionNumber: 31 });
    await h.expireTokens();
    const cards = await client.confirmOrder({ transactionId, totalAmount: '0.2', paymentId: 'pay-31' });
    const failure = await client.getBalance('nope').catch((e: unknown) => e);
    await rw.close();

    const tokens = new Set(rw.sentHeaders.map((hd) => hd.authorization).filter((t): t is string => t !== undefined));
    expect(tokens.size).toBe(2);
    const secrets = [PRIVATE_KEY, ...tokens, ...cards.map((c) => c.cardCode)];
    expect(cards).toHaveLength(2);

    const output = log.text();
    const evidence = [output, JSON.stringify(records), JSON.stringify(failure), String(failure)].join('\n');
    for (const secret of secrets) expect(evidence).not.toContain(secret);

    const callLines = log
      .lines()
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'upstream call');
    expect(callLines.map((l) => [l.level, l.endpoint, l.upstreamCode])).toEqual([
      [20, 'login', 11111],
      [20, 'initiateCardRequest', 11111],
      [20, 'confirmOrder', 10000],
      [20, 'login', 11111],
      [20, 'confirmOrder', 11111],
      [20, 'getBalance', 10002],
    ]);
    for (const line of callLines) {
      expect(line).toMatchObject({ component: 'upstream', durationMs: expect.any(Number), httpStatus: 200 });
      expect(Object.keys(line).sort()).toEqual(
        ['attempt', 'component', 'durationMs', 'endpoint', 'errorKind', 'httpStatus', 'level', 'msg', 'ok', 'service', 'time', 'upstreamCode'].filter(
          (k) => k !== 'errorKind' || line.errorKind !== undefined,
        ),
      );
    }
    expect(records).toHaveLength(6);
    expect(records.every((r) => Object.keys(r).sort().join() === 'attempt,durationMs,endpoint,errorKind,httpStatus,ok,upstreamCode')).toBe(true);
  });

  it('nothing is logged above debug on a clean run, so production logs stay quiet', async () => {
    const { client, log } = h.client();
    await client.getCardList();
    const levels = log.lines().map((l) => (JSON.parse(l) as { level: number }).level);
    expect(levels.length).toBeGreaterThan(0);
    expect(levels.every((level) => level === 20)).toBe(true);
  });
});
