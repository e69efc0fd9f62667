// The baseline: a bare node:http server answering every request with the exact bytes and headers the
// service sent for the scenario (read from the file named by BASELINE_RESPONSE), doing nothing else.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const { headers, body } = JSON.parse(readFileSync(String(process.env.BASELINE_RESPONSE), 'utf8')) as {
  headers: Record<string, string>;
  body: string;
};
const bytes = Buffer.from(body, 'base64');
const server = createServer((_request, response) => {
  response.writeHead(200, { ...headers, 'content-length': bytes.length });
  response.end(bytes);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(
    `${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`,
  );
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
