import { runCli } from '../../src/cli/run-cli.js';

/** Runs the command line in this process, as `node dist/cli.js ...args` would, capturing what it writes. */
export async function cli(env: NodeJS.ProcessEnv, ...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env,
  });
  return { code, stdout, stderr };
}
