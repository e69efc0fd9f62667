import { GRANTS } from '../platform/auth/grants.js';

export const USAGE = `Usage: node dist/cli.js <command> [options]

Commands:
  migrate
      Apply every pending database migration (DATABASE_URL) and exit.
  token issue --owner <id> --grant <grant> [--grant <grant> ...] [--ttl <seconds>]
      Issue a token for an owner (a Discord ID) with the given grants; prints {"token", "expires_at"}.
      Grants: ${GRANTS.join(', ')}
  token revoke --jti <jti>
      Revoke a token and every token refreshed from it, or that it was refreshed from.
  applications list [--state <state>] [--owner <id>] [--limit <n>]
      Print developer applications, newest first, one JSON object per line (100 unless --limit).
      States: pending, approved, rejected, withdrawn, revoked
  applications approve|reject|revoke <id> [--reason <text>]
      Decide on an application as an operator (recorded as "operator" in its history); prints it.
      Approving prints the application's credential, a token for its owner with its grants, once.
  help, --help, -h
      Print this help.
  --version
      Print the version.

Configuration comes from the environment (and .env), as for the service.
`;

/** A command line that cannot be run as given: the message, then the usage, and exit code 2. */
export class UsageError extends Error {}
