import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

/**
 * What every module gives the app, built the same way by `create<Name>Module(deps)`: its service (what
 * other modules may call: modules meet only through services), its routes (a plugin the app registers),
 * and what to close when the app closes. The app registers the modules from one list (src/modules.ts).
 */
export interface AppModule<Service = unknown> {
  readonly name: string;
  readonly service: Service;
  readonly routes?: FastifyPluginAsyncTypebox;
  close?(): Promise<void>;
}
