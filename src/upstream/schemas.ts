import { z } from 'zod';

/**
 * Response schemas (upstream-api.md §2, §4). Strict where a wrong value would cost money or lose a
 * reservation (ids, amounts, stock, transaction_id, card codes), tolerant of representation
 * differences the spec itself is inconsistent about (string vs number ids, string vs number codes).
 * Unknown extra fields are ignored: the provider may add fields without a version change.
 */

/**
 * `code`: the string "11111" on success, numeric in the spec's error sample; either type is
 * accepted, a string with surrounding whitespace is trimmed. This is the field we branch on.
 */
const code = z.union([z.number().int(), z.string().trim().regex(/^\d+$/).transform(Number)]);

/**
 * `status`: a boolean per the spec; "true"/"false" strings (any case, trimmed) are read as such.
 * It is informational only (the code decides), so null, absence or any other value reads as
 * "not stated" instead of making an answer that may carry a transaction_id unreadable.
 */
const status = z.unknown().optional().transform((v): boolean | undefined => {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (t === 'true') return true;
    if (t === 'false') return false;
  }
  return undefined;
});

/** `error`: free text on error answers; null, absence or a non-string reads as "no text". */
const errorText = z.unknown().optional().transform((v): string | undefined => (typeof v === 'string' ? v : undefined));

/** Fields common to every answer, parsed first to decide success or error by `code` alone. */
export const envelopeSchema = z.object({ status, code, error: errorText });

/**
 * Identifiers: the spec types vendor_id/card_id as strings, but echoes card_id as an integer.
 * Numbers are accepted only in the safe-integer range, where String(n) is exactly the digits sent.
 */
const id = z.union([z.string().min(1), z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).transform(String)]);

/**
 * Money: a decimal string per the spec. A JSON number is tolerated only when its shortest textual
 * form is a plain decimal (then it equals the literal the provider wrote, for any price of up to
 * 15 significant digits); exponent forms are refused rather than guessed.
 */
const decimalText = z
  .union([z.string(), z.number().nonnegative().transform(String)])
  .refine((v) => /^\d+(?:\.\d+)?$/.test(v), { message: 'not a plain decimal' });

/** Stock: an integer; a canonical integer string is tolerated. */
const count = z.union([
  z.number().int().nonnegative(),
  z.string().regex(/^(?:0|[1-9]\d*)$/).transform(Number),
]);

export const loginSchema = z.object({ token: z.string().min(1) });

export const vendorSchema = z
  .object({ vendor_id: id, name: z.string(), name_ar: z.string() })
  .transform((v) => ({ vendorId: v.vendor_id, name: v.name, nameAr: v.name_ar }));
export const cardListSchema = z.object({ data: z.array(vendorSchema) });

export const denominationSchema = z
  .object({
    card_id: id,
    name_in_english: z.string(),
    name_in_arabic: z.string(),
    amount: decimalText,
    balance: count,
  })
  .transform((d) => ({
    cardId: d.card_id,
    nameEn: d.name_in_english,
    nameAr: d.name_in_arabic,
    amount: d.amount,
    balance: d.balance,
  }));
export const cardDetailsListSchema = z.object({ data: z.array(denominationSchema) });

export const balanceSchema = z.object({
  data: z.array(z.object({ card_id: id, balance: count })).min(1),
});

/**
 * transaction_id is the only handle on reserved cards (§3 rule 2), so a number is accepted if it
 * is a safe integer (exact), and the id is also looked for under `data` in case the provider nests
 * it there: refusing an answer that does carry the id would strand the reservation.
 */
const transactionId = z.union([
  z.string().regex(/\S/),
  z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).transform(String),
]);
export const initiateSchema = z
  .object({
    transaction_id: transactionId.optional(),
    data: z
      .union([z.object({ transaction_id: transactionId }), z.array(z.object({ transaction_id: transactionId })).length(1)])
      .optional()
      .catch(undefined),
  })
  .transform((r, ctx) => {
    const nested = Array.isArray(r.data) ? r.data[0]?.transaction_id : r.data?.transaction_id;
    const found = r.transaction_id ?? nested;
    if (found === undefined) {
      ctx.addIssue({ code: 'custom', path: ['transaction_id'], message: 'missing' });
      return z.NEVER;
    }
    return { transactionId: found };
  });

/**
 * An issued card. `card_code` must carry a non-blank value; a JSON number is accepted when its
 * digits are exact (integer literals are quoted before parsing, see quoteIdentifierLiterals, so
 * long numeric codes keep every digit). `card_number` must be present: an entry without it, or any
 * unusable entry, makes the whole answer malformed, and the usable cards travel on the error as
 * salvage (responses.ts) rather than being returned as if the answer were clean.
 */
const safeIntegerText = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).transform(String);
export const issuedCardSchema = z
  .object({
    card_code: z.union([z.string().regex(/\S/), safeIntegerText]),
    card_number: z.union([z.string(), safeIntegerText]),
  })
  .transform((c) => ({ cardCode: c.card_code, cardNumber: c.card_number }));
export const confirmSchema = z.object({ data: z.array(issuedCardSchema) });

/**
 * Describes validation issues by path and issue code only: zod messages or inputs could echo
 * response content (card codes), which must never reach an error message or a log.
 */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${formatPath(issue.path)}: ${issue.code}`)
    .join('; ');
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('');
}
