import { AppError, type FieldPath, fieldProblemOf, InputError } from '../errors.js';
import { escapePointer } from '../json-pointer.js';
import { REQUEST_PARTS } from '../validation.js';

/** The parts of a request a service's input comes from. */
export type RequestPart = 'body' | 'querystring' | 'params';

/**
 * A route's handler of what its service threw about the input the route gave it from `part` of the request:
 * an InputError is answered as a 400 about that part, its cause the part's (`Invalid request body`) and each
 * field named by its place there (`body/samples/3/at`, a JSON pointer under the part's name, as validation
 * names fields); anything else is rethrown as it is. `service.log(body).catch(inBody)`.
 */
export function inRequestPart(part: RequestPart): (error: unknown) => never {
  const { cause, prefix } = REQUEST_PARTS[part];
  const pointer = (field: FieldPath) =>
    [prefix, ...field.map((segment) => escapePointer(String(segment)))].join('/');
  return (error) => {
    if (!(error instanceof InputError)) throw error;
    const problems = error.inputProblems.map((problem) =>
      'field' in problem ? fieldProblemOf(problem, pointer) : problem,
    );
    throw new AppError(problems, { cause, status: error.status });
  };
}

/** What a service threw about the request's body, as its 400 (`inRequestPart('body')`). */
export const inBody = inRequestPart('body');

/** What a service threw about the request's query string, as its 400 (`inRequestPart('querystring')`). */
export const inQuery = inRequestPart('querystring');
