import { Type } from 'typebox';

const Names = Type.Object(
  { en: Type.String(), ar: Type.String({ description: 'Arabic name as the provider gives it (right-to-left).' }) },
  { additionalProperties: false },
);

export const VendorSchema = Type.Object(
  { vendorId: Type.String({ description: 'Case-sensitive provider identifier.' }), name: Names, active: Type.Boolean() },
  { $id: 'Vendor', additionalProperties: false },
);

export const DenominationSchema = Type.Object(
  {
    cardId: Type.String({ description: 'Case-sensitive provider identifier.' }),
    vendorId: Type.String(),
    name: Names,
    unitPrice: Type.String({ description: 'Decimal string exactly as the provider sent it, e.g. "9.99" or "15".', pattern: '^\\d+(\\.\\d+)?$' }),
    stock: Type.Integer({ description: 'Units in stock at the last sync; checked live before every order.' }),
    active: Type.Boolean(),
  },
  { $id: 'Denomination', additionalProperties: false },
);

const Meta = {
  syncedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the catalog was last synced from the provider.' }),
  stale: Type.Boolean({ description: 'True when the last successful sync is older than CATALOG_STALE_AFTER_MS, or there was none.' }),
};

export const VendorList = Type.Object({ data: Type.Array(Type.Ref('Vendor')), ...Meta }, { additionalProperties: false });
export const DenominationList = Type.Object({ data: Type.Array(Type.Ref('Denomination')), ...Meta }, { additionalProperties: false });
export const DenominationOne = Type.Object({ data: Type.Ref('Denomination'), ...Meta }, { additionalProperties: false });

// Query strings are text, and type coercion is off app-wide (a JSON body must not turn "3" into
// 3), so flags are spelled out.
export const ListQuery = Type.Object(
  { includeInactive: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'Also list what the provider no longer offers.' })) },
  { additionalProperties: false },
);
