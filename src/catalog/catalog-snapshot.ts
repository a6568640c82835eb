import { createHash } from 'node:crypto';

export interface VendorView {
  vendorId: string;
  name: { en: string; ar: string };
  active: boolean;
}

export interface DenominationView {
  cardId: string;
  vendorId: string;
  name: { en: string; ar: string };
  /** Exactly as the provider sent it ("9.99", "15"). */
  unitPrice: string;
  stock: number;
  active: boolean;
}

export interface CatalogRows {
  vendors: { id: string; nameEn: string; nameAr: string; active: boolean }[];
  denominations: { id: string; vendorId: string; nameEn: string; nameAr: string; unitPrice: string; stock: number; active: boolean }[];
  syncedAt: Date | null;
}

export interface RenderedBody {
  /** UTF-8 JSON, ready to send. */
  body: Buffer;
  etag: string;
}

/**
 * An immutable view of the catalog, built once per load, so requests are answered from memory
 * with no database query and no serialisation: each distinct answer (route, filter, staleness)
 * is rendered once, with its ETag, on first use.
 */
export class CatalogSnapshot {
  readonly vendors: VendorView[];
  readonly vendorById: Map<string, VendorView>;
  readonly denominationsByVendor: Map<string, DenominationView[]>;
  readonly denominationById: Map<string, DenominationView>;
  readonly syncedAt: Date | null;
  private readonly syncedAtIso: string | null;
  private readonly renderedFresh = new Map<string, RenderedBody>();
  private readonly renderedStale = new Map<string, RenderedBody>();

  constructor(rows: CatalogRows) {
    const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    this.vendors = [...rows.vendors].sort(byId).map((v) => ({ vendorId: v.id, name: { en: v.nameEn, ar: v.nameAr }, active: v.active }));
    this.vendorById = new Map(this.vendors.map((v) => [v.vendorId, v]));
    this.denominationsByVendor = new Map(this.vendors.map((v) => [v.vendorId, []]));
    this.denominationById = new Map();
    for (const d of [...rows.denominations].sort(byId)) {
      const view: DenominationView = { cardId: d.id, vendorId: d.vendorId, name: { en: d.nameEn, ar: d.nameAr }, unitPrice: d.unitPrice, stock: d.stock, active: d.active };
      this.denominationById.set(d.id, view);
      this.denominationsByVendor.get(d.vendorId)?.push(view);
    }
    this.syncedAt = rows.syncedAt;
    this.syncedAtIso = rows.syncedAt?.toISOString() ?? null;
  }

  get isEmpty(): boolean {
    return this.vendors.length === 0;
  }

  /** The rendered answer for `key`, built by `data()` once per snapshot and staleness. */
  render(key: string, stale: boolean, data: () => unknown): RenderedBody {
    // One map per staleness: no key string to build per request.
    const rendered = stale ? this.renderedStale : this.renderedFresh;
    let entry = rendered.get(key);
    if (!entry) {
      // Encoded to UTF-8 once, not for every response (Arabic names make the string two-byte).
      const body = Buffer.from(JSON.stringify({ data: data(), syncedAt: this.syncedAtIso, stale }), 'utf8');
      entry = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
      rendered.set(key, entry);
    }
    return entry;
  }
}
