import { AppError, ErrorKinds } from '../errors.js';

/** A 401 for a token that is not acceptable, saying why (never echoing the token). */
export const invalidToken = (developerReason: string): AppError =>
  AppError.of(ErrorKinds.TOKEN_INVALID, { developerReason });

/**
 * The same error, each problem's `developer_reason` followed by `hint` when it is a 401 (where a token
 * comes from); any other error as it is.
 */
export function withHint(error: unknown, hint: string | undefined): unknown {
  if (!hint || !(error instanceof AppError) || error.status !== 401) return error;
  return new AppError(
    error.problems.map((problem) => ({ ...problem, developerReason: `${problem.developerReason}. ${hint}` })),
    { cause: error.summary, status: error.status, headers: error.headers, grant: error.grant },
  );
}
