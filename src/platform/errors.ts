import { catalogue, type ErrorName } from './error-catalogue.js';
import { fixes } from './error-fixes.js';

/*
 * The errors the service throws, each of a kind from the catalogue (error-catalogue.ts, with how to fix
 * each in error-fixes.ts); the error handler (error-handler.ts) turns them into ErrorResponses.
 */

export type { ErrorName } from './error-catalogue.js';

/** A kind of error: its catalogue entry and how to fix it. */
export interface ErrorKind {
  readonly name: ErrorName;
  readonly code: number;
  /** The HTTP status this kind of error answers with when it is the only problem. */
  readonly status: number;
  /** The default end-user explanation. */
  readonly reason: string;
  /** How a developer fixes it: what to change or do, in a sentence. */
  readonly fix: string;
}

export const ErrorKinds = Object.freeze(
  Object.fromEntries(
    Object.entries(catalogue).map(([name, entry]) => [
      name,
      Object.freeze({ name, ...entry, fix: fixes[name as ErrorName] }),
    ]),
  ),
) as { readonly [N in ErrorName]: ErrorKind & { readonly name: N } };

export const errorCatalogue: readonly ErrorKind[] = Object.values(ErrorKinds);

/** The HTTP statuses' short titles, used as an ErrorResponse's `cause` when no better one is given. */
const statusTitles: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  408: 'Request timeout',
  409: 'Conflict',
  413: 'Payload too large',
  414: 'URI too long',
  415: 'Unsupported media type',
  429: 'Too many requests',
  500: 'Internal server error',
  502: 'Bad gateway',
  503: 'Service unavailable',
  504: 'Gateway timeout',
};

export interface Problem {
  readonly kind: ErrorKind;
  /** Safe to show an end user. */
  readonly reason: string;
  /** Tells the developer what to fix. */
  readonly developerReason: string;
}

/**
 * The most problems one ErrorResponse lists: the first found. Whatever finds problems stops looking once it
 * has this many, so that a rejected request costs about what reading it costs, and its answer stays small.
 */
export const MAX_PROBLEMS = 20;

/**
 * What an AppError says besides its problems. `grant` and `forbidden` are the domain's words, for anyone who
 * throws; `cause`, `status` and `headers` shape the HTTP answer, and are the platform's HTTP layer's and the
 * routes' to give: a service says what went wrong, and the HTTP layer how it is answered (its
 * `WWW-Authenticate`, `platform/http/auth-challenge.ts`; where a field was in the request and the 400's cause,
 * `platform/http/input-errors.ts`).
 */
export interface AppErrorOptions {
  /** The grant that would have allowed what was refused, when one would (a 403 names it as its `scope`). */
  readonly grant?: string;
  /**
   * What was refused is not the caller's to do, whatever the request says: a refusal of access (403), whatever
   * the kind's usual status (an operator's grant in an application a reviewer tries to approve).
   */
  readonly forbidden?: true;
  /** The ErrorResponse's `cause`; the status title when not given. */
  readonly cause?: string;
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * An error the service means to answer with: everything it says is safe to send to the client. It keeps
 * the first MAX_PROBLEMS problems it is given.
 */
export class AppError extends Error {
  readonly status: number;
  readonly summary: string;
  readonly problems: readonly Problem[];
  readonly headers: Readonly<Record<string, string>>;
  /** The grant that would have allowed what was refused, when one would. */
  readonly grant: string | undefined;

  constructor(found: readonly Problem[], options: AppErrorOptions = {}) {
    const problems = found.length > MAX_PROBLEMS ? found.slice(0, MAX_PROBLEMS) : found;
    const first = problems[0];
    if (!first) throw new TypeError('An AppError needs at least one problem');
    const status = options.status ?? (options.forbidden ? 403 : first.kind.status);
    const summary = options.cause ?? statusTitles[status] ?? 'Error';
    super(`${summary}: ${problems.map((problem) => problem.developerReason).join('; ')}`);
    this.name = 'AppError';
    this.status = status;
    this.summary = summary;
    this.problems = problems;
    this.headers = options.headers ?? {};
    this.grant = options.grant;
  }

  /** One problem of one kind; the reasons default to the catalogue's. */
  static of(
    kind: ErrorKind,
    details: { reason?: string; developerReason?: string } & AppErrorOptions = {},
  ): AppError {
    const reason = details.reason ?? kind.reason;
    return new AppError([{ kind, reason, developerReason: details.developerReason ?? reason }], details);
  }
}

/** Where something lies in the caller's input: keys and indexes from its top (`['samples', 3, 'at']`). */
export type FieldPath = readonly (string | number)[];

/** A field as an end user reads its name: `samples[3].at`, `user.user_id`. */
export function fieldName(field: FieldPath): string {
  let name = '';
  for (const segment of field) {
    name += typeof segment === 'number' ? `[${segment}]` : name === '' ? segment : `.${segment}`;
  }
  return name;
}

/**
 * A problem with one field of the caller's input: the field, and the rule its value breaks, said after the
 * field's name (`must be ...`); of kind INVALID_FIELD unless another is given. `developerRule` is what the
 * developer is told instead, when it says more; it names any other field through `name`, which names fields
 * as the answer does.
 */
export interface FieldProblem {
  readonly kind?: ErrorKind;
  readonly field: FieldPath;
  readonly rule: string;
  readonly developerRule?: string | ((name: (field: FieldPath) => string) => string);
}

/** A field's problem as an answer says it, each field named by `name` for the developer. */
export function fieldProblemOf(problem: FieldProblem, name: (field: FieldPath) => string): Problem {
  const { kind = ErrorKinds.INVALID_FIELD, field, rule, developerRule = rule } = problem;
  const developerText = typeof developerRule === 'function' ? developerRule(name) : developerRule;
  return { kind, reason: `${fieldName(field)} ${rule}`, developerReason: `${name(field)} ${developerText}` };
}

/**
 * The caller's input breaks the rules: problems with its fields, or with the input as a whole (a Problem).
 * A service throws it knowing nothing of where its input came from: the route that gave the input says
 * where (`inBody`, `inQuery` of `platform/http/input-errors.ts`: `body/samples/3/at`, and the 400's cause).
 * Answered as it is, each field is named as an end user reads it (`samples[3].at`).
 */
export class InputError extends AppError {
  readonly inputProblems: readonly (FieldProblem | Problem)[];

  constructor(found: readonly (FieldProblem | Problem)[]) {
    const inputProblems = found.length > MAX_PROBLEMS ? found.slice(0, MAX_PROBLEMS) : found;
    super(
      inputProblems.map((problem) => ('field' in problem ? fieldProblemOf(problem, fieldName) : problem)),
    );
    this.name = 'InputError';
    this.inputProblems = inputProblems;
  }
}
