import { type Static, Type } from 'typebox';
import type { AppError } from './errors.js';

const ErrorObjectSchema = Type.Object({
  code: Type.Integer({ description: 'Stable catalogue code of this problem (see the docs page).' }),
  name: Type.String({ description: 'Stable catalogue name, SCREAMING_SNAKE_CASE.' }),
  reason: Type.String({ description: 'Safe to show an end user.' }),
  developer_reason: Type.String({ description: 'What the developer should fix.' }),
});

export const ErrorResponseSchema = Type.Object(
  {
    success: Type.Boolean({ const: false }),
    code: Type.Integer({ description: 'The HTTP status.' }),
    cause: Type.String(),
    documentation: Type.String({ description: 'Link to the docs page section for this error.' }),
    msTime: Type.Integer({ description: "The server's epoch milliseconds when the error was produced." }),
    extra: Type.Array(ErrorObjectSchema),
  },
  { $id: 'ErrorResponse', description: 'Every error answer, with one `extra` entry per problem.' },
);

export type ErrorResponse = Static<typeof ErrorResponseSchema>;

/** The response schemas of the given error statuses, for a route's `response` (registered once by $id). */
export function errorResponses<S extends number>(...statuses: S[]): Record<S, typeof ErrorResponseRef> {
  return Object.fromEntries(statuses.map((status) => [status, ErrorResponseRef])) as Record<
    S,
    typeof ErrorResponseRef
  >;
}

const ErrorResponseRef = Type.Unsafe<ErrorResponse>({ $ref: 'ErrorResponse#' });

/** The docs page anchor of an error name; the docs page renders the same ids. */
export const errorAnchor = (name: string): string => `error-${name}`;

export function toErrorResponse(error: AppError, docsUrl: string, now: number = Date.now()): ErrorResponse {
  const first = error.problems[0]?.kind.name;
  return {
    success: false,
    code: error.status,
    cause: error.summary,
    documentation: `${docsUrl}#${first ? errorAnchor(first) : 'errors'}`,
    msTime: now,
    extra: error.problems.map((problem) => ({
      code: problem.kind.code,
      name: problem.kind.name,
      reason: problem.reason,
      developer_reason: problem.developerReason,
    })),
  };
}
