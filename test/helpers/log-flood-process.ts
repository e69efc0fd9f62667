// A process that floods standard output through the service's log destination, for the logging tests:
// `node log-flood-process.js <lines> <wait-ms>` writes <lines> lines of 8 KiB, waits <wait-ms>, closes the
// destination and exits; on standard error it says how its memory grew ({"rssGrowthMiB"}) and when it closed.
import { logDestination } from '../../src/platform/logger.js';

const [lines = 0, waitMs = 0] = process.argv.slice(2).map(Number);
const destination = logDestination(1);
const rssBefore = process.memoryUsage().rss;
const padding = 'x'.repeat(8 * 1024);
for (let line = 0; line < lines; line++)
  destination.write(`{"level":"info","line":${line},"padding":"${padding}"}\n`);
const rssGrowthMiB = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
process.stderr.write(`${JSON.stringify({ rssGrowthMiB })}\n`);
await new Promise((resolve) => setTimeout(resolve, waitMs));
await destination.close();
process.stderr.write('closed\n');
process.exit(0);
