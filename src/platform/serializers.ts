import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type Serializer = ReturnType<ReturnType<SerializerFactory>>;

const buildSerializers = SerializerSelector();
/**
 * Response serializers already compiled: by the shared schemas they may refer to and the options, then by
 * the route's status and schema text. An app built again in the same process (the tests build hundreds)
 * reuses them instead of generating and compiling the same code again. Bounded by the response schemas of
 * the code.
 */
const compiled = new Map<string, Map<string, Serializer>>();

/**
 * Fastify's serializer factory (`schemaController.compilersFactory.buildSerializer`): fast-json-stringify
 * as Fastify uses it by default, each serializer compiled once per process. A serializer is a pure function
 * of its schema, the shared schemas and the options.
 */
export const sharedSerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = buildSerializers(externalSchemas, options);
  const context = JSON.stringify([externalSchemas ?? null, options ?? null]);
  let ofContext = compiled.get(context);
  if (!ofContext) {
    ofContext = new Map();
    compiled.set(context, ofContext);
  }
  const serializers = ofContext;
  return (route) => {
    const key = `${route.httpStatus} ${JSON.stringify(route.schema)}`;
    let serialize = serializers.get(key);
    if (!serialize) {
      serialize = compile(route);
      serializers.set(key, serialize);
    }
    return serialize;
  };
};
