/** An answer of `app.inject`, as the suites read it. */
export interface Reply {
  readonly statusCode: number;
  readonly body: string;
  readonly headers: Record<string, unknown>;
}

export interface ProblemBody {
  readonly name: string;
  readonly reason: string;
  readonly developer_reason: string;
}

/** The answer's body, parsed (plain JSON: 64-bit IDs are checked on the text). */
export const json = (reply: Pick<Reply, 'body'>) => JSON.parse(reply.body);

/** An ErrorResponse's `extra[]`; empty for any other answer. */
export const problems = (reply: Pick<Reply, 'body'>): ProblemBody[] =>
  (json(reply).extra as ProblemBody[] | undefined) ?? [];

/** The name of an ErrorResponse's first problem. */
export const problemName = (reply: Pick<Reply, 'body'>) => problems(reply)[0]?.name;

/**
 * One policy's parameters in a RateLimit or RateLimit-Policy header (`"work";r=598;t=1, "upstream";r=71;t=212`):
 * `{ r: 71, t: 212 }` for `upstream`; undefined when the header does not name the policy.
 */
export function rateLimitItem(header: unknown, policy: string): Record<string, number> | undefined {
  if (typeof header !== 'string') return undefined;
  for (const item of header.split(', ')) {
    const [name, ...parameters] = item.split(';');
    if (name !== `"${policy}"`) continue;
    return Object.fromEntries(
      parameters.map((part) => part.split('=')).map(([key, value]) => [key, Number(value)]),
    );
  }
  return undefined;
}
