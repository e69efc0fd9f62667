import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TSchema } from 'typebox';

/**
 * What every module gives the app, built the same way by `create<Name>Module(deps)`: its service (what
 * other modules may call: modules meet only through services), its routes (a plugin the app registers),
 * what to start once the app is ready, and what to close when the app closes. The app registers the
 * modules from one list (src/modules.ts).
 */
export interface AppModule<Service = unknown> {
  readonly name: string;
  readonly service: Service;
  readonly routes?: FastifyPluginAsyncTypebox;
  /**
   * Shared schemas its routes refer to (`$ref: '<$id>#'`), each with its `$id`: components of the OpenAPI
   * document, which client generators name. The app adds them at its root (`app.addSchema`), as it does
   * ErrorResponse, before any routes: a plugin adding schemas of its own would have its validator rebuilt by
   * Fastify's default compiler, not the app's.
   */
  readonly schemas?: readonly TSchema[];
  /**
   * Starts background work (periodic jobs); called once the app is ready, so after the migrations. The app
   * is ready once what it returns has settled.
   */
  start?(): void | Promise<void>;
  close?(): Promise<void>;
}
