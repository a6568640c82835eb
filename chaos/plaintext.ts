import type { CrashRig } from '../test/crash/harness.js';

export interface PlaintextScan {
  /** Distinct card codes the sandbox issued in this scenario. */
  codes: number;
  /** Occurrences of an issued code: [where, code prefix] (the code itself is not printed). */
  found: { where: string; code: string }[];
  dbRows: number;
  redisKeys: number;
  logBytes: number;
}

/** Every card code the sandbox issued: the cards of every transaction it knows. */
export function issuedCodes(rig: CrashRig): string[] {
  const codes = new Set<string>();
  for (const r of rig.sandbox.state.reservations.values()) for (const c of rig.sandbox.control.cardsOf(r.transactionId)) codes.add(c.cardCode);
  for (const c of rig.sandbox.state.confirmations) for (const card of c.cards) codes.add(card.cardCode);
  return [...codes];
}

function occurrences(text: string, codes: string[], where: string, out: PlaintextScan['found']): void {
  for (const code of codes) if (text.includes(code)) out.push({ where, code: `${code.slice(0, 4)}…` });
}

/**
 * Looks for every issued card code in: every row of every table of the scenario's database
 * (`t::text`), every value of every Redis key under the scenario's prefix, and the logs of every
 * gateway process. The codes may only exist encrypted (order_cards) and in answers to the API.
 */
export async function scanForPlaintext(rig: CrashRig, logs: string): Promise<PlaintextScan> {
  const codes = issuedCodes(rig);
  const found: PlaintextScan['found'] = [];

  // The scanner itself: a code written into text is found.
  if (codes.length > 0) {
    const probe: PlaintextScan['found'] = [];
    occurrences(`x${codes[0]}x`, codes, 'probe', probe);
    if (probe.length !== 1) throw new Error('the plaintext scanner does not find a planted code');
  }

  const tables = await rig.prisma.$queryRawUnsafe<{ schema: string; name: string }[]>(
    `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  let dbRows = 0;
  for (const t of tables) {
    const ident = `"${t.schema.replace(/"/g, '""')}"."${t.name.replace(/"/g, '""')}"`;
    const rows = await rig.prisma.$queryRawUnsafe<{ row: string }[]>(`SELECT t::text AS row FROM ${ident} t`);
    dbRows += rows.length;
    for (const { row } of rows) occurrences(row, codes, `db:${t.name}`, found);
  }

  const redis = rig.redis;
  let redisKeys = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${rig.prefix}:*`, 'COUNT', 500);
    cursor = next;
    for (const key of keys) {
      redisKeys++;
      const type = await redis.type(key);
      let values: string[] = [];
      if (type === 'string') values = [(await redis.get(key)) ?? ''];
      else if (type === 'hash') values = Object.entries(await redis.hgetall(key)).flat();
      else if (type === 'list') values = await redis.lrange(key, 0, -1);
      else if (type === 'set') values = await redis.smembers(key);
      else if (type === 'zset') values = await redis.zrange(key, '0', '-1');
      else if (type === 'stream') values = (await redis.xrange(key, '-', '+')).flatMap(([id, fields]) => [id, ...fields]);
      occurrences(`${key}\n${values.join('\n')}`, codes, `redis:${type}`, found);
    }
  } while (cursor !== '0');

  occurrences(logs, codes, 'logs', found);
  return { codes: codes.length, found, dbRows, redisKeys, logBytes: logs.length };
}
