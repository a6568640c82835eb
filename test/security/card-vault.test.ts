import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma, type PrismaClient } from '../../src/platform/db.js';
import {
  CARD_VAULT_ERROR_CODES,
  CardVaultError,
  cardCodeAdditionalData,
  createCardVault,
  type CardVault,
  type CardVaultErrorCode,
} from '../../src/security/card-vault.js';
import { createIsolatedDatabase } from '../helpers/database.js';
import { cardCode, createOrder, key } from './fixtures.js';

const ORDER_A = '3f1c2a4e-8b7d-4c6a-9e5f-0a1b2c3d4e5f';
const ORDER_B = '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a';

function vaultError(run: () => unknown): CardVaultError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(CardVaultError);
    return e as CardVaultError;
  }
  throw new Error('expected a CardVaultError');
}

const expectCode = (run: () => unknown, code: CardVaultErrorCode) => {
  const e = vaultError(run);
  expect(e.code).toBe(code);
  return e;
};

describe('card vault', () => {
  const k1 = key('k1');
  const k2 = key('k2');
  let vault: CardVault;

  beforeAll(async () => {
    vault = await createCardVault([k1, k2]);
  });

  it('round-trips a code under the current key, with a 24-byte nonce and a ciphertext that is not the code', () => {
    const code = cardCode();
    const sealed = vault.encrypt({ orderId: ORDER_A, position: 0, code });
    expect(sealed.keyId).toBe('k1');
    expect(vault.currentKeyId).toBe('k1');
    expect(vault.keyIds).toEqual(['k1', 'k2']);
    expect(sealed.nonce).toHaveLength(24);
    expect(sealed.ciphertext).toHaveLength(Buffer.byteLength(code) + 16);
    expect(Buffer.from(sealed.ciphertext).includes(Buffer.from(code))).toBe(false);
    expect(vault.decrypt({ orderId: ORDER_A, position: 0, ...sealed })).toBe(code);
    // The UUID is bound by value, not spelling.
    expect(vault.decrypt({ orderId: ORDER_A.toUpperCase(), position: 0, ...sealed })).toBe(code);
  });

  it('round-trips non-ASCII and empty codes', () => {
    for (const code of ['', 'كود-١٢٣', 'ÄÖÜ-😀']) {
      const sealed = vault.encrypt({ orderId: ORDER_A, position: 3, code });
      expect(vault.decrypt({ orderId: ORDER_A, position: 3, ...sealed })).toBe(code);
    }
  });

  it('refuses a ciphertext moved to another order or position', () => {
    const sealed = vault.encrypt({ orderId: ORDER_A, position: 1, code: cardCode() });
    expectCode(() => vault.decrypt({ orderId: ORDER_B, position: 1, ...sealed }), 'decrypt_failed');
    expectCode(() => vault.decrypt({ orderId: ORDER_A, position: 0, ...sealed }), 'decrypt_failed');
    expectCode(() => vault.decrypt({ orderId: ORDER_A, position: 2, ...sealed }), 'decrypt_failed');
  });

  it('binds the key id: the same key bytes under another id do not decrypt', async () => {
    const alias = await createCardVault([k1, { id: 'k1-alias', key: k1.key }]);
    const sealed = alias.encrypt({ orderId: ORDER_A, position: 0, code: cardCode() });
    expectCode(() => alias.decrypt({ orderId: ORDER_A, position: 0, ...sealed, keyId: 'k1-alias' }), 'decrypt_failed');
  });

  it('refuses any tampered byte of the ciphertext or nonce, and a wrong key', async () => {
    const code = cardCode();
    const sealed = vault.encrypt({ orderId: ORDER_A, position: 0, code });
    for (let i = 0; i < sealed.ciphertext.length; i++) {
      const ciphertext = Uint8Array.from(sealed.ciphertext);
      ciphertext[i]! ^= 0x01;
      expectCode(() => vault.decrypt({ orderId: ORDER_A, position: 0, ...sealed, ciphertext }), 'decrypt_failed');
    }
    const nonce = Uint8Array.from(sealed.nonce);
    nonce[5]! ^= 0x80;
    expectCode(() => vault.decrypt({ orderId: ORDER_A, position: 0, ...sealed, nonce }), 'decrypt_failed');
    expectCode(() => vault.decrypt({ orderId: ORDER_A, position: 0, ...sealed, nonce: sealed.nonce.slice(0, 12) }), 'decrypt_failed');
    expectCode(() => vault.decrypt({ orderId: ORDER_A, position: 0, ...sealed, ciphertext: sealed.ciphertext.slice(0, 10) }), 'decrypt_failed');
    // Same id, other bytes: a key ring that was edited by mistake.
    const impostor = await createCardVault([key('k1')]);
    expectCode(() => impostor.decrypt({ orderId: ORDER_A, position: 0, ...sealed }), 'decrypt_failed');
  });

  it('names an unknown key id with unknown_key', async () => {
    const sealed = vault.encrypt({ orderId: ORDER_A, position: 0, code: cardCode() });
    const other = await createCardVault([k2]);
    expect(other.hasKey('k1')).toBe(false);
    expect(other.hasKey('k2')).toBe(true);
    const e = expectCode(() => other.decrypt({ orderId: ORDER_A, position: 0, ...sealed }), 'unknown_key');
    expect(e.message).toContain('"k1"');
  });

  it('decrypts codes sealed under an older key of the ring', async () => {
    const old = await createCardVault([k2]);
    const code = cardCode();
    const sealed = old.encrypt({ orderId: ORDER_B, position: 4, code });
    expect(sealed.keyId).toBe('k2');
    expect(vault.decrypt({ orderId: ORDER_B, position: 4, ...sealed })).toBe(code);
  });

  it('never puts the code, key, nonce or ciphertext in an error', async () => {
    const code = cardCode();
    const sealed = vault.encrypt({ orderId: ORDER_A, position: 0, code });
    const errors = [
      vaultError(() => vault.decrypt({ orderId: ORDER_B, position: 0, ...sealed })),
      vaultError(() => vault.decrypt({ orderId: ORDER_A, position: 0, ...sealed, keyId: 'nope' })),
      vaultError(() => vault.decrypt({ orderId: ORDER_A, position: 0, ...sealed, nonce: new Uint8Array(3) })),
    ];
    const secrets = [code, ...[k1.key, sealed.nonce, sealed.ciphertext].flatMap((b) => [Buffer.from(b).toString('base64'), Buffer.from(b).toString('hex')])];
    for (const e of errors) {
      const text = `${e.message} ${e.stack ?? ''} ${JSON.stringify(e)} ${String(e.cause)}`;
      for (const s of secrets) expect(text).not.toContain(s);
    }
    // The vault object itself holds no enumerable secret (safe to log by accident).
    expect(JSON.stringify(vault)).not.toContain(Buffer.from(k1.key).toString('base64'));
    expect(Object.keys(vault).sort()).toEqual(['currentKeyId', 'decrypt', 'encrypt', 'hasKey', 'keyIds']);
  });

  it('uses a fresh nonce every time', () => {
    const nonces = new Set<string>();
    const ciphertexts = new Set<string>();
    const code = cardCode();
    for (let i = 0; i < 10_000; i++) {
      const sealed = vault.encrypt({ orderId: ORDER_A, position: 0, code });
      nonces.add(Buffer.from(sealed.nonce).toString('hex'));
      ciphertexts.add(Buffer.from(sealed.ciphertext).toString('hex'));
    }
    expect(nonces.size).toBe(10_000);
    expect(ciphertexts.size).toBe(10_000);
  });

  it('validates the key ring without echoing a key', async () => {
    const short = { id: 'short', key: new Uint8Array(randomBytes(16)) };
    await expect(createCardVault([])).rejects.toMatchObject({ code: 'invalid_keys' });
    await expect(createCardVault([k1, { id: 'k1', key: k2.key }])).rejects.toMatchObject({ code: 'invalid_keys', message: expect.stringContaining('appears twice') });
    await expect(createCardVault([{ id: '', key: k1.key }])).rejects.toMatchObject({ code: 'invalid_keys' });
    const e = await createCardVault([k1, short]).then(
      () => expect.unreachable('a 16-byte key must be refused'),
      (x: unknown) => x as CardVaultError,
    );
    expect(e).toBeInstanceOf(CardVaultError);
    expect(e).toMatchObject({ code: 'invalid_keys', message: 'card-code key "short" must be 32 bytes' });
    expect(e.message).not.toContain(Buffer.from(short.key).toString('base64'));
  });

  it('copies the keys: zeroing the caller\'s buffer later does not break the vault', async () => {
    const k = key('tmp');
    const v = await createCardVault([k]);
    const sealed = v.encrypt({ orderId: ORDER_A, position: 0, code: 'ABC' });
    k.key.fill(0);
    expect(v.decrypt({ orderId: ORDER_A, position: 0, ...sealed })).toBe('ABC');
  });

  it('refuses places that cannot be bound unambiguously', () => {
    expectCode(() => vault.encrypt({ orderId: 'not-a-uuid', position: 0, code: 'x' }), 'invalid_input');
    expectCode(() => vault.encrypt({ orderId: ORDER_A, position: -1, code: 'x' }), 'invalid_input');
    expectCode(() => vault.encrypt({ orderId: ORDER_A, position: 1.5, code: 'x' }), 'invalid_input');
    expectCode(() => vault.encrypt({ orderId: ORDER_A, position: 2 ** 31, code: 'x' }), 'invalid_input');
  });

  it('lays the additional data out as documented', () => {
    const ad = Buffer.from(cardCodeAdditionalData(ORDER_A, 258, 'k1'));
    expect(ad.subarray(0, 16).toString('ascii')).toBe('gw.card-code.v1\0');
    expect(ad.subarray(16, 32).toString('hex')).toBe(ORDER_A.replaceAll('-', ''));
    expect(ad.readUInt32BE(32)).toBe(258);
    expect(ad[36]).toBe(2);
    expect(ad.subarray(37).toString('utf8')).toBe('k1');
    expect(ad).toHaveLength(39);
  });

  it('has a stable, documented list of error codes', () => {
    expect([...CARD_VAULT_ERROR_CODES]).toEqual(['invalid_keys', 'invalid_input', 'unknown_key', 'decrypt_failed']);
  });
});

describe('card vault with PostgreSQL', () => {
  let db: { url: string; drop: () => Promise<void> };
  let prisma: PrismaClient;
  let vault: CardVault;

  beforeAll(async () => {
    db = await createIsolatedDatabase();
    prisma = createPrisma({ url: db.url, poolMax: 2 });
    vault = await createCardVault([key('k1')]);
  });
  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
  });

  it('stores only ciphertext: the code is in no column, raw bytes or text rendering of the row', async () => {
    const orderId = await createOrder(prisma, 2);
    const codes = [cardCode(), cardCode()];
    await prisma.orderCard.createMany({
      data: codes.map((code, position) => ({ orderId, position, ...vault.encrypt({ orderId, position, code }), cardNumber: `SN${position}` })),
    });

    const rows = await prisma.orderCard.findMany({ where: { orderId }, orderBy: { position: 'asc' } });
    expect(rows.map((r) => vault.decrypt(r))).toEqual(codes);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const raw = await client.query<{ nonce: Buffer; ciphertext: Buffer; as_text: string }>(
        'SELECT nonce, ciphertext, t::text AS as_text FROM order_cards t WHERE order_id = $1',
        [orderId],
      );
      const dump = await client.query<{ dump: string }>("SELECT string_agg(t::text, E'\\n') AS dump FROM order_cards t");
      const escaped = await client.query<{ e: string }>("SELECT string_agg(encode(ciphertext, 'escape'), '') AS e FROM order_cards");
      expect(raw.rows).toHaveLength(2);
      for (const code of codes) {
        const hex = Buffer.from(code).toString('hex');
        for (const r of raw.rows) {
          expect(r.ciphertext.includes(Buffer.from(code))).toBe(false);
          expect(r.as_text).not.toContain(code);
          expect(r.as_text.toLowerCase()).not.toContain(hex);
        }
        expect(dump.rows[0]!.dump).not.toContain(code);
        expect(dump.rows[0]!.dump.toLowerCase()).not.toContain(hex);
        expect(escaped.rows[0]!.e).not.toContain(code);
      }
    } finally {
      await client.end();
    }
  });

  it('fails to decrypt a stored ciphertext copied onto another order', async () => {
    const from = await createOrder(prisma);
    const to = await createOrder(prisma);
    await prisma.orderCard.create({ data: { orderId: from, position: 0, ...vault.encrypt({ orderId: from, position: 0, code: cardCode() }), cardNumber: 'SN-A' } });
    const stolen = await prisma.orderCard.findUniqueOrThrow({ where: { orderId_position: { orderId: from, position: 0 } } });
    await prisma.orderCard.create({ data: { orderId: to, position: 0, keyId: stolen.keyId, nonce: stolen.nonce, ciphertext: stolen.ciphertext, cardNumber: 'SN-B' } });
    const moved = await prisma.orderCard.findUniqueOrThrow({ where: { orderId_position: { orderId: to, position: 0 } } });
    expectCode(() => vault.decrypt(moved), 'decrypt_failed');
  });
});
