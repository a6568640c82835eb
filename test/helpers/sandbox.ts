import { createSandbox, type Sandbox, type SandboxCatalogSeed, type SandboxOptions } from '../../src/sandbox/index.js';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/index.js';
import { SANDBOX_DEFAULT_PRIVATE_KEY, SANDBOX_DEFAULT_USERNAME } from '../../src/config/index.js';
import { createLogger, type Logger } from '../../src/platform/logger.js';

export interface SandboxWithClient {
  sandbox: Sandbox;
  url: string;
  client: UpstreamClient;
  close(): Promise<void>;
}

/** A sandbox on a free loopback port and a real client for it, with fast retries for tests. */
export async function startSandbox(options: SandboxOptions = {}, log: Logger = createLogger('silent')): Promise<SandboxWithClient> {
  const sandbox = await createSandbox(options);
  const url = await sandbox.listen({ port: 0, host: '127.0.0.1' });
  const client = createUpstreamClient({
    baseUrl: url,
    username: options.username ?? SANDBOX_DEFAULT_USERNAME,
    privateKey: options.privateKey ?? SANDBOX_DEFAULT_PRIVATE_KEY,
    timeoutMs: 5_000,
    logger: log,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
  });
  return {
    sandbox,
    url,
    client,
    async close() {
      await client.close();
      await sandbox.close();
    },
  };
}

/** A small catalog for tests, in the provider's words. */
export function seed(vendors: { id: string; name?: string; nameAr?: string; active?: boolean; cards: { id: string; amount: string; stock?: number; active?: boolean }[] }[]): SandboxCatalogSeed {
  return {
    vendors: vendors.map((v) => ({
      vendor_id: v.id,
      name: v.name ?? `Vendor ${v.id}`,
      name_ar: v.nameAr ?? `المورد ${v.id}`,
      active: v.active ?? true,
      cards: v.cards.map((c) => ({
        card_id: c.id,
        name_in_english: `Card ${c.id}`,
        name_in_arabic: `بطاقة ${c.id}`,
        amount: c.amount,
        stock: c.stock ?? 10,
        active: c.active ?? true,
      })),
    })),
  };
}
