// The real service process (startServer, as main.ts runs it) plus one deliberately slow route, for the
// graceful-shutdown test. The route logs "slow request started" when it is in the handler, so that the
// test knows the request is in flight without guessing how long that takes.
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';

await startServer(loadConfig(process.env), {
  configure: (app) => {
    app.get('/test/slow', async (request) => {
      request.log.info('slow request started');
      await sleep(Number(process.env.SLOW_MS ?? 1000));
      return { finished: true };
    });
  },
});
