import { DEVELOPER_GRANTS, OPERATOR_GRANTS } from '../platform/auth/grants.js';

export const USAGE = `Usage: node dist/cli.js <command> [options]

Commands:
  migrate
      Apply every pending database migration (DATABASE_URL) and exit.
  token issue --owner <id> [--grant <grant> ...] [--ttl <seconds: 60 to 31536000>]
      Issue a token for an owner (a Discord ID) with the given grants; prints {"token", "expires_at"}.
      With no --grant, an identity token: it may only apply for access, follow its owner's applications
      and manage their keys (for a developer without the portal). Run it with the service's
      environment (DATABASE_URL, DATA_DIR, JWT_SECRET): tokens are signed with the service's secret.
      Grants a developer may also apply for: ${DEVELOPER_GRANTS.join(', ')}
      Grants only an operator gives: ${OPERATOR_GRANTS.join(', ')}
  token revoke --jti <jti>
      Revoke a token and every token refreshed from it, or that it was refreshed from.
  applications list [--state <state>] [--owner <id>] [--limit <n>]
      Print developer applications, newest first, one JSON object per line (100 unless --limit).
      States: pending, approved, rejected, withdrawn, revoked
  applications approve|reject|revoke <id> [--reason <text>]
      Decide on an application as an operator (recorded as "operator" in its history); prints it.
      Approving prints no secret: the application's owner collects its key (the portal, or
      POST /admin/developer/applications/<id>/key) and exchanges it for tokens at POST /auth/token.
  budget set --owner <id> --units <n> [--reason <text>]
      Give an owner a budget of the service's work of <n> cost units per WORK_BUDGET_WINDOW_SECONDS, in
      place of WORK_BUDGET_UNITS; every instance applies it within WORK_BUDGET_REFRESH_SECONDS (10).
      Prints it.
  budget clear --owner <id>
      Give the owner the default budget again (exit 1 if they had none of their own).
  budget show [--owner <id>]
      Print the owner's budget (the default if none of their own), or every owner's own budget.
  help, --help, -h
      Print this help.
  --version
      Print the version.

Configuration comes from the environment (and .env), as for the service.
`;

/** A command line that cannot be run as given: the message, then the usage, and exit code 2. */
export class UsageError extends Error {}
