import { ConfigError, loadConfig } from '../config.js';
import { applicationsCommand } from './applications.command.js';
import { budgetCommand } from './budget.command.js';
import type { CliIo, Command } from './cli-context.js';
import { migrateCommand } from './migrate.command.js';
import { tokenCommand } from './token.command.js';
import { USAGE, UsageError } from './usage.js';
import { packageVersion } from './version.js';

const commands: Readonly<Record<string, Command>> = {
  migrate: migrateCommand,
  token: tokenCommand,
  applications: applicationsCommand,
  budget: budgetCommand,
};

const HELP = new Set(['help', '--help', '-h']);

/**
 * The command line, runnable in-process: runs `argv` (the arguments after the script), writes to `io`, and
 * resolves to the exit code: 0 done, 1 failed (or nothing to do, for `token revoke`), 2 a wrong command
 * line (with the usage on stderr). `--help` anywhere prints the usage on stdout instead.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  if ((name !== undefined && HELP.has(name)) || args.includes('--help') || args.includes('-h')) {
    io.stdout(USAGE);
    return 0;
  }
  if (name === '--version') {
    io.stdout(`${packageVersion()}\n`);
    return 0;
  }
  try {
    const command = name !== undefined && Object.hasOwn(commands, name) ? commands[name] : undefined;
    if (!command) throw new UsageError(name ? `unknown command: ${name}` : 'no command given');
    return (await command(args, { io, config: () => loadConfig(io.env) })) ?? 0;
  } catch (error) {
    if (error instanceof UsageError || isParseArgsError(error)) {
      io.stderr(`${(error as Error).message}\n\n${USAGE}`);
      return 2;
    }
    io.stderr(`${error instanceof ConfigError ? error.message : (error as Error).message}\n`);
    return 1;
  }
}

const isParseArgsError = (error: unknown): boolean =>
  typeof (error as NodeJS.ErrnoException)?.code === 'string' &&
  (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS_') === true;
