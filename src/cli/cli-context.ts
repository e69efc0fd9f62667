import type { Config } from '../config.js';

/** Where a command writes, and what it reads its configuration from: the process, or a test's capture. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readonly env: NodeJS.ProcessEnv;
}

export interface CliContext {
  readonly io: CliIo;
  /** The configuration, read from `io.env` when a command first asks (so `--help` needs none). */
  config(): Config;
}

/** A command: its arguments after its name; resolves to the exit code (0 when it returns nothing). */
export type Command = (args: readonly string[], context: CliContext) => Promise<number | undefined>;
