import compress from '@fastify/compress';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { createInfrastructure, type Infrastructure } from './infrastructure.js';
import { createModules } from './modules.js';
import { type Gate, routeGuards } from './platform/auth/route-guard.js';
import {
  readAcceptEncodingOnce,
  refuseEncodedBody,
  refuseForeignCharset,
  responseCompressionOptions,
} from './platform/compression.js';
import type { Database } from './platform/db/database.js';
import { errorHandling, sendError } from './platform/error-handler.js';
import { crossOrigin } from './platform/http/cors.js';
import { httpDocs } from './platform/http/http-docs.js';
import { timeoutOptions } from './platform/http/timeouts.js';
import { parseJsonBody, serializeJson } from './platform/json.js';
import { addressLimits } from './platform/limits/address-limit.js';
import { settleBody, workBudgetHeaders } from './platform/limits/work-budget.js';
import { logDestination, loggerOptions, RequestLogController } from './platform/logger.js';
import { httpMetrics } from './platform/metrics.js';
import { clientErrorHandler } from './platform/raw-error-answers.js';
import { requestContext, requestIdOf, stampHeaders } from './platform/request-context.js';
import { sharedSerializers } from './platform/serializers.js';
import { createValidatorCompiler } from './platform/validation.js';
import { wayInFor } from './way-in.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's database; opened by buildApp and closed with the app. */
    db: Database;
  }
}

export interface AppOptions {
  readonly config: Config;
  /** Where log lines go (standard output when not given); tests read them from here. */
  readonly logStream?: NodeJS.WritableStream;
}

/**
 * Builds the whole service, ready to listen or to be driven by `app.inject`: the platform plugins, the
 * shared parts (database, Redis, cache, upstream clients) and every module of the list in src/modules.ts.
 * It closes everything it opened on `app.close()`. It does not migrate: `startServer` and the CLI do.
 */
export async function buildApp({ config, logStream }: AppOptions): Promise<FastifyInstance> {
  const { publicUrl } = config.server;
  const destination = logStream ? undefined : logDestination();
  const serverOptions = timeoutOptions(config.server.timeouts);
  const app = Fastify({
    logger: loggerOptions(config.logLevel, logStream ?? destination),
    genReqId: requestIdOf,
    requestIdHeader: false,
    logController: new RequestLogController(),
    bodyLimit: config.server.bodyLimitBytes,
    ...serverOptions,
    // A request without Host reaches requestContext, which answers it with an ErrorResponse.
    http: { ...serverOptions.http, requireHostHeader: false },
    trustProxy: config.server.trustProxy,
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers } },
    return503OnClosing: false, // requestContext answers those with an ErrorResponse
    clientErrorHandler: clientErrorHandler(publicUrl),
    frameworkErrors: (error, request, reply) => {
      stampHeaders(reply, request.id);
      sendError(error, request, reply, publicUrl);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(createValidatorCompiler());
  app.setReplySerializer(serializeJson);
  app.removeAllContentTypeParsers();
  const { bodyMaxDepth } = config.server;
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    try {
      // Read: paid for, whatever is refused next.
      settleBody(request, Buffer.byteLength(body as string), request.log);
      refuseEncodedBody(request.headers['content-encoding']);
      refuseForeignCharset(request.headers['content-type']);
      done(null, parseJsonBody(body as string, bodyMaxDepth));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  // onClose hooks run last-registered first: the log is written out after everything else has closed.
  if (destination) app.addHook('onClose', async () => destination.close());
  const shared = await createInfrastructure(config, app.log);
  // The modules close before the parts they use.
  app.addHook('onClose', () => shared.close());
  app.decorate('db', shared.db);
  try {
    await registerAll(app, config, shared);
  } catch (error) {
    await app.close();
    throw error;
  }
  return app;
}

async function registerAll(app: FastifyInstance, config: Config, shared: Infrastructure): Promise<void> {
  const { publicUrl } = config.server;
  await app.register(requestContext);
  await app.register(errorHandling, { publicUrl });
  // After requestContext, so that a preflight's answer carries API-Version and X-Request-Id too.
  if (config.server.corsOrigins.length > 0)
    await app.register(crossOrigin, { origins: config.server.corsOrigins });
  await app.register(httpMetrics, { registry: shared.metrics });
  app.addHook('onRequest', readAcceptEncodingOnce);
  await app.register(compress, responseCompressionOptions);
  const wayIn = wayInFor(config);
  await app.register(httpDocs, {
    publicUrl,
    bearerDescription: wayIn.bearerDescription,
    gettingStartedHtml: wayIn.docsHtml,
    cors: config.server.corsOrigins.length > 0,
  });
  await app.register(addressLimits, { buckets: shared.buckets });
  await app.register(workBudgetHeaders);

  if (!config.upstream.hypixelApiKey)
    app.log.warn(
      'HYPIXEL_API_KEY is not set: player and profile lookups that need Hypixel answer 503 until it is',
    );
  const modules = await createModules(config, shared, wayIn);
  const gate: Gate = {
    authenticator: modules.authenticator,
    wayIn: { token: wayIn.token, identity: wayIn.identity },
    budget: modules.workBudget,
    ...(modules.sessions ? { sessions: modules.sessions } : {}),
  };
  // app.requireGrant, app.requireOwnerOrGrant and app.portalSecurity, for the modules' routes.
  await app.register(routeGuards, { gate });
  // Each owner's usage of the day: every request made with their token or session, and its 429s.
  const { usage } = shared;
  app.addHook('onResponse', (request, reply, done) => {
    const owner = request.principal?.owner;
    if (owner !== undefined) {
      usage.count(owner, 'requests');
      if (reply.statusCode === 429) usage.count(owner, 'refused');
    }
    done();
  });
  // The modules' shared schemas first, at the root: any module's routes may refer to them.
  for (const { schemas = [] } of modules.list) for (const schema of schemas) app.addSchema(schema);
  for (const { name, routes, start, close } of modules.list) {
    if (routes) await app.register(routes);
    // Ready comes after the migrations: startServer and the tests migrate before they listen or inject.
    if (start) app.addHook('onReady', async () => start());
    if (close) {
      app.addHook('onClose', () =>
        close().catch((error: unknown) => app.log.error({ err: error, module: name }, 'could not close')),
      );
    }
  }
}
