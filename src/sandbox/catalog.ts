import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * The sandbox's seed catalog: vendors with English and Arabic names, each with denominations
 * (price as a decimal string, initial stock). The seed is validated once; the live catalog is a
 * deep copy whose stock moves with reservations and is rebuilt from the seed on reset.
 */

const decimalAmount = z.string().regex(/^(0|[1-9]\d*)(\.\d{1,2})?$/, 'must be a decimal string with at most two decimals');

const denominationSeed = z.object({
  card_id: z.string().min(1),
  name_in_english: z.string().min(1),
  name_in_arabic: z.string().min(1),
  amount: decimalAmount,
  stock: z.number().int().min(0),
  /** Inactive denominations answer 10002, as a card "not enabled" for the merchant would. */
  active: z.boolean().default(true),
});

const vendorSeed = z.object({
  vendor_id: z.string().min(1),
  name: z.string().min(1),
  name_ar: z.string().min(1),
  /** Card code shape: X = letter or digit, 9 = digit, anything else literal. */
  code_pattern: z.string().min(4).default('XXXX-XXXX-XXXX-XXXX'),
  active: z.boolean().default(true),
  cards: z.array(denominationSeed),
});

export const catalogSeedSchema = z
  .object({ vendors: z.array(vendorSeed) })
  .superRefine((seed, ctx) => {
    const vendorIds = new Set<string>();
    const cardIds = new Set<string>();
    for (const vendor of seed.vendors) {
      if (vendorIds.has(vendor.vendor_id)) ctx.addIssue({ code: 'custom', message: `duplicate vendor_id ${vendor.vendor_id}` });
      vendorIds.add(vendor.vendor_id);
      for (const card of vendor.cards) {
        // card_id is global: balance and order calls name a card without its vendor.
        if (cardIds.has(card.card_id)) ctx.addIssue({ code: 'custom', message: `duplicate card_id ${card.card_id}` });
        cardIds.add(card.card_id);
      }
    }
  });

export type SandboxCatalogSeed = z.input<typeof catalogSeedSchema>;
export type CatalogSeed = z.output<typeof catalogSeedSchema>;

export const DEFAULT_CATALOG_PATH = new URL('../../config/sandbox-catalog.json', import.meta.url);

export function loadCatalogSeed(source: SandboxCatalogSeed | string | URL = DEFAULT_CATALOG_PATH): CatalogSeed {
  const raw: unknown = typeof source === 'string' || source instanceof URL ? JSON.parse(readFileSync(source, 'utf8')) : source;
  const result = catalogSeedSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.') || 'catalog'}: ${i.message}`);
    throw new Error(`invalid sandbox catalog:\n  ${problems.join('\n  ')}`);
  }
  return result.data;
}

export interface Denomination {
  cardId: string;
  vendorId: string;
  nameEn: string;
  nameAr: string;
  amount: string;
  /** Units available now: seed stock minus pending and confirmed reservations (plus manual sets). */
  stock: number;
  active: boolean;
  codePattern: string;
}

export interface Vendor {
  vendorId: string;
  name: string;
  nameAr: string;
  active: boolean;
  cardIds: string[];
}

export interface LiveCatalog {
  vendors: Map<string, Vendor>;
  cards: Map<string, Denomination>;
}

export function buildLiveCatalog(seed: CatalogSeed): LiveCatalog {
  const vendors = new Map<string, Vendor>();
  const cards = new Map<string, Denomination>();
  for (const v of seed.vendors) {
    vendors.set(v.vendor_id, { vendorId: v.vendor_id, name: v.name, nameAr: v.name_ar, active: v.active, cardIds: v.cards.map((c) => c.card_id) });
    for (const c of v.cards) {
      cards.set(c.card_id, {
        cardId: c.card_id,
        vendorId: v.vendor_id,
        nameEn: c.name_in_english,
        nameAr: c.name_in_arabic,
        amount: c.amount,
        stock: c.stock,
        active: c.active && v.active,
        codePattern: v.code_pattern,
      });
    }
  }
  return { vendors, cards };
}
