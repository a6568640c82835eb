import { STATUS_CODES } from 'node:http';
import { Type, type Static } from 'typebox';
import type { ErrorCode } from '../../errors.js';

/** RFC 9457 problem details, with the stable `code` clients branch on. */
export const ProblemDetails = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String({ description: 'Stable snake_case error code; branch on this, not on the text.' }),
    detail: Type.Optional(Type.String()),
    instance: Type.Optional(Type.String()),
    requestId: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'ProblemDetails', additionalProperties: true },
);

export type ProblemDetailsBody = Static<typeof ProblemDetails> & Record<string, unknown>;

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/** `code` must be a key of ERROR_STATUS, so no answer can carry a code missing from the table. */
export function problem(status: number, code: ErrorCode, detail: string | undefined, extra: Record<string, unknown> = {}): ProblemDetailsBody {
  // Extension members come first: RFC 9457's own members (and our code) always win, so a detail
  // named like one of them (e.g. an order's `status`) can never change the answer's meaning.
  return {
    ...extra,
    type: 'about:blank',
    title: STATUS_CODES[status] ?? 'Error',
    status,
    code,
    ...(detail === undefined ? {} : { detail }),
  };
}
