import { Decimal } from 'decimal.js';
import { Prisma, type PrismaClient } from '../platform/db.js';

export const GROUP_BY = ['day', 'vendor', 'denomination'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

export interface SalesRow {
  key: string;
  /** Names as the provider gives them (empty for days). */
  nameEn: string;
  nameAr: string;
  orders: number;
  quantity: number;
  /** Exact decimal sum of order totals. */
  amount: string;
}

export interface SalesReport {
  from: string;
  to: string;
  groupBy: GroupBy;
  timeZone: string;
  rows: SalesRow[];
  total: { orders: number; quantity: number; amount: string };
}

/** Money as text with at least two decimals ("0.30", "150.00", "1.255"), from an exact decimal. */
export function formatAmount(value: string | Decimal): string {
  const d = new Decimal(value);
  return d.decimalPlaces() <= 2 ? d.toFixed(2) : d.toString();
}

// Fixed SQL fragments per grouping: no user input reaches them (the time zone is a parameter).
const KEY: Record<Exclude<GroupBy, 'day'>, Prisma.Sql> = {
  vendor: Prisma.raw('v.id'),
  denomination: Prisma.raw('d.id'),
};

/**
 * Fulfilled orders' totals over [from, to), by day (in `timeZone`), vendor or denomination:
 * order count, card quantity and amount, summed by PostgreSQL in numeric (exact).
 */
export async function salesReport(prisma: PrismaClient, opts: { from: Date; to: Date; groupBy: GroupBy; timeZone: string }): Promise<SalesReport> {
  const key = opts.groupBy === 'day' ? Prisma.sql`to_char(o.fulfilled_at AT TIME ZONE ${opts.timeZone}, 'YYYY-MM-DD')` : KEY[opts.groupBy];
  const names =
    opts.groupBy === 'vendor'
      ? Prisma.raw('max(v.name_en) AS name_en, max(v.name_ar) AS name_ar')
      : opts.groupBy === 'denomination'
        ? Prisma.raw('max(d.name_en) AS name_en, max(d.name_ar) AS name_ar')
        : Prisma.raw(`'' AS name_en, '' AS name_ar`);
  const rows = await prisma.$queryRaw<{ key: string; name_en: string; name_ar: string; orders: number; quantity: number; amount: string }[]>`
    SELECT ${key} AS key, ${names}, count(*)::int AS orders, sum(o.quantity)::int AS quantity, sum(o.total_amount)::text AS amount
    FROM orders o
    JOIN denominations d ON d.id = o.card_id
    JOIN vendors v ON v.id = d.vendor_id
    WHERE o.status = 'fulfilled' AND o.fulfilled_at >= ${opts.from} AND o.fulfilled_at < ${opts.to}
    GROUP BY 1
    ORDER BY 1`;
  const total = rows.reduce(
    (acc, r) => ({ orders: acc.orders + r.orders, quantity: acc.quantity + r.quantity, amount: acc.amount.plus(r.amount) }),
    { orders: 0, quantity: 0, amount: new Decimal(0) },
  );
  return {
    from: opts.from.toISOString(),
    to: opts.to.toISOString(),
    groupBy: opts.groupBy,
    timeZone: opts.timeZone,
    rows: rows.map((r) => ({ key: r.key, nameEn: r.name_en, nameAr: r.name_ar, orders: r.orders, quantity: r.quantity, amount: formatAmount(r.amount) })),
    total: { orders: total.orders, quantity: total.quantity, amount: formatAmount(total.amount) },
  };
}

/** RFC 4180 CSV; cells that could start a spreadsheet formula are prefixed with a quote. */
export function salesReportCsv(report: SalesReport): string {
  const cell = (v: string | number) => {
    let s = String(v);
    if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const lines = [[report.groupBy, 'name_en', 'name_ar', 'orders', 'quantity', 'amount'].map(cell).join(',')];
  for (const r of report.rows) lines.push([r.key, r.nameEn, r.nameAr, r.orders, r.quantity, r.amount].map(cell).join(','));
  lines.push(['total', '', '', report.total.orders, report.total.quantity, report.total.amount].map(cell).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
