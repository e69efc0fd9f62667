import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type preHandlerAsyncHookHandler } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { createHealthService, type Probe } from './modules/health/health.service.js';
import { createPlayerData } from './modules/players/players.module.js';
import { playersRoutes } from './modules/players/players.routes.js';
import { profilesRoutes } from './modules/profiles/profiles.routes.js';
import { createTokens } from './modules/tokens/tokens.module.js';
import { tokensRoutes } from './modules/tokens/tokens.routes.js';
import { type Grant, requireGrant } from './platform/auth.js';
import { createDatabase, type Database, pingDatabase } from './platform/db/database.js';
import { pendingMigrations } from './platform/db/migrator.js';
import { clientErrorHandler, errorHandling, sendError } from './platform/error-handler.js';
import { httpDocs } from './platform/http-docs.js';
import { parseJsonBody, serializeJson } from './platform/json.js';
import { loggerOptions, RequestLogController } from './platform/logger.js';
import { createMetricsRegistry, httpMetrics } from './platform/metrics.js';
import { rateLimiting } from './platform/rate-limit.js';
import { createRedis, pingRedis } from './platform/redis.js';
import { requestContext, requestIdOf, stampHeaders } from './platform/request-context.js';
import { createValidatorCompiler } from './platform/validation.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's database; opened by buildApp and closed with the app. */
    db: Database;
    /** A route guard: a valid bearer token, carrying `grant` when one is named (401 / 403 otherwise). */
    requireGrant(grant?: Grant): preHandlerAsyncHookHandler;
  }
}

export interface AppOptions {
  readonly config: Config;
  /** Where log lines go (standard output when not given); tests read them from here. */
  readonly logStream?: NodeJS.WritableStream;
}

/**
 * Builds the whole service, ready to listen or to be driven by `app.inject`. It opens the database (and
 * Redis when configured) and closes them on `app.close()`. It does not migrate: `startServer` and the CLI do.
 */
export async function buildApp({ config, logStream }: AppOptions): Promise<FastifyInstance> {
  const { publicUrl } = config.server;
  const app = Fastify({
    logger: loggerOptions(config.logLevel, logStream),
    genReqId: requestIdOf,
    requestIdHeader: false,
    logController: new RequestLogController(),
    bodyLimit: config.server.bodyLimitBytes,
    trustProxy: config.server.trustProxy,
    return503OnClosing: false, // requestContext answers those with an ErrorResponse
    clientErrorHandler,
    frameworkErrors: (error, request, reply) => {
      stampHeaders(reply, request.id);
      sendError(error, request, reply, publicUrl);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(createValidatorCompiler());
  app.setReplySerializer(serializeJson);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  await app.register(requestContext);
  await app.register(errorHandling, { publicUrl });
  const metrics = createMetricsRegistry();
  await app.register(httpMetrics, { registry: metrics });
  await app.register(httpDocs);

  const db = createDatabase(config.database);
  app.decorate('db', db);
  app.addHook('onClose', async () => db.destroy());
  const probes: Record<string, Probe> = {
    database: () => pingDatabase(db),
    migrations: async () => {
      const pending = await pendingMigrations(db);
      if (pending.length > 0) throw new Error(`not applied: ${pending.join(', ')}`);
    },
  };

  const redis = config.redisUrl ? await connectRedis(app, config.redisUrl) : undefined;
  if (redis) probes.redis = () => pingRedis(redis);
  await app.register(rateLimiting, { redis, keyPrefix: config.redisKeyPrefix });

  const tokens = await createTokens(db, config);
  app.decorate('requireGrant', (grant?: Grant) => requireGrant(tokens, grant));

  await app.register(healthRoutes, { service: createHealthService(probes), metrics });
  await app.register(tokensRoutes, { service: tokens, rateLimitPerMinute: config.auth.rateLimitPerMinute });

  if (!config.upstream.hypixelApiKey)
    app.log.warn('HYPIXEL_API_KEY is not set: player and profile lookups will fail');
  const playerData = createPlayerData(config, { db, redis, registry: metrics, log: app.log });
  app.addHook('onClose', () => playerData.close());
  await app.register(playersRoutes, { service: playerData.players });
  await app.register(profilesRoutes, { service: playerData.profiles });
  return app;
}

/** Connects to Redis without making the start wait on it: a missing Redis shows in /ready, not as a crash. */
async function connectRedis(app: FastifyInstance, url: string): Promise<Redis> {
  const redis = createRedis(url);
  redis.on('error', (error) => app.log.warn({ err: error }, 'redis connection error'));
  app.addHook('onClose', async () => {
    await redis.quit().catch(() => redis.disconnect());
  });
  await redis.connect().catch((error: Error) => app.log.warn({ err: error }, 'redis is not reachable yet'));
  return redis;
}
