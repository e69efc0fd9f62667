// The layering rules of src/ (docs/architecture.md), checked by `npm run lint:layers` as part of `npm test`.
// Layers, from the ground up: platform -> upstream -> modules -> the composition root (src/*.ts, src/cli/).
// Type-only imports count: a layer may not even name what lies above it.

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles: each file can be read (and tested) after the files it imports.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'platform-is-the-ground',
      severity: 'error',
      comment:
        'src/platform is domain-free: it imports nothing else of src (no upstream, no module, no root file).',
      from: { path: '^src/platform/' },
      to: { path: '^src/', pathNot: '^src/platform/' },
    },
    {
      name: 'upstream-stands-on-platform',
      severity: 'error',
      comment: 'src/upstream builds on src/platform only: it knows no module and no root file.',
      from: { path: '^src/upstream/' },
      to: { path: '^src/', pathNot: '^src/(platform|upstream)/' },
    },
    {
      name: 'upstream-clients-know-no-http-server',
      severity: 'error',
      comment:
        "src/upstream knows nothing of the HTTP server, not even its types: how a lookup answers (the result shape, an upstream failure's status and Retry-After) is platform/http/lookup-result.ts's, which knows no upstream; the routes give it upstreamFailureOf (upstream-failure.ts: a failure's catalogue kind and cause, as data).",
      from: { path: '^src/upstream/' },
      to: {
        path: [
          'node_modules/(fastify|@fastify)/',
          '^src/platform/http/',
          '^src/platform/error-(handler|response)\\.ts$',
          '^src/platform/auth/route-guard\\.ts$',
        ],
      },
    },
    {
      name: 'modules-below-the-root',
      severity: 'error',
      comment:
        'Modules get their settings and shared parts from the composition root (src/*.ts, src/cli/); they do not reach up to it.',
      from: { path: '^src/modules/' },
      to: { path: '^src/([^/]+\\.ts$|cli/)' },
    },
    {
      name: 'module-files-have-a-role',
      severity: 'error',
      comment:
        'Every file of a module is one of its roles (module, routes, reply, schemas, service, repository, tables) or a migration, so that the rules about roles cover it.',
      from: {
        path: '^src/modules/[^/]+/[^/]+$',
        pathNot: '\\.(module|routes|reply|schemas|service|repository|tables)\\.ts$',
      },
      to: {},
    },
    {
      name: 'modules-meet-through-services',
      severity: 'error',
      comment:
        'A module uses another module only through its service (src/modules/<other>/<other>.service.ts): never its repository, tables, routes or schemas.',
      from: { path: '^src/modules/([^/]+)/' },
      to: {
        path: '^src/modules/',
        pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/[^/]+\\.service\\.ts$'],
      },
    },
    {
      name: 'routes-shape-http-only',
      severity: 'error',
      comment:
        'Routes (and their reply helpers) call services; they hold no SQL: no repository, no tables, no Kysely.',
      from: { path: '\\.(routes|reply)\\.ts$' },
      to: { path: ['\\.repository\\.ts$', '\\.tables\\.ts$', '^src/platform/db/', 'node_modules/kysely/'] },
    },
    {
      name: 'services-know-no-http',
      severity: 'error',
      comment:
        "Services hold the rules and return domain values: no Fastify, no routes, reply helpers or wire schemas, nothing of the platform's HTTP layer (which words WWW-Authenticate, platform/http/auth-challenge.ts, and where a field was in the request with the 400's cause, platform/http/input-errors.ts). They say what went wrong (an error kind, a field, a grant), never how it is answered.",
      from: { path: '\\.service\\.ts$' },
      to: {
        path: [
          'node_modules/(fastify|@fastify)/',
          '^src/platform/http/',
          '^src/platform/auth/route-guard\\.ts$',
          '\\.(routes|reply|schemas)\\.ts$',
        ],
      },
    },
    {
      name: 'one-place-writes-challenges',
      severity: 'error',
      comment:
        "WWW-Authenticate is written in one place, the platform's error handler, from the error's kind and grant (platform/http/auth-challenge.ts): nobody else words a challenge.",
      from: { path: '^src/', pathNot: '^src/platform/(error-handler|http/auth-challenge)\\.ts$' },
      to: { path: '^src/platform/http/auth-challenge\\.ts$' },
    },
    {
      name: 'routes-say-where-input-was',
      severity: 'error',
      comment:
        "A service's InputError is turned into the request's 400 (where each field was, the part's cause: platform/http/input-errors.ts) by the route that gave it the input, which alone knows where it came from.",
      from: { path: '^src/modules/', pathNot: '\\.routes\\.ts$' },
      to: { path: '^src/platform/http/input-errors\\.ts$' },
    },
    {
      name: 'repositories-know-no-http',
      severity: 'error',
      comment: 'Repositories hold SQL and return domain values: nothing of Fastify or of HTTP.',
      from: { path: '\\.repository\\.ts$' },
      to: {
        path: [
          'node_modules/(fastify|@fastify)/',
          '^src/platform/http/',
          '\\.(routes|reply|schemas|service)\\.ts$',
        ],
      },
    },
    {
      name: 'tables-are-their-repositories-own',
      severity: 'error',
      comment: "A module's table types are read by its own repository only.",
      from: { path: '^src/', pathNot: '\\.repository\\.ts$' },
      to: { path: '\\.tables\\.ts$' },
    },
    {
      name: 'sql-in-repositories',
      severity: 'error',
      comment:
        'Kysely is used by repositories, migrations and src/platform/db only; services start transactions through platform/db.',
      from: { path: '^src/', pathNot: ['\\.repository\\.ts$', '/migrations/', '^src/platform/db/'] },
      to: { path: 'node_modules/kysely/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'only-repositories-see-tables',
      severity: 'error',
      comment:
        'An executor is opaque to services; only a repository turns it into queries on its own tables (tablesOf).',
      from: { path: '^src/', pathNot: '\\.repository\\.ts$' },
      to: { path: '^src/platform/db/repository-view\\.ts$' },
    },
    {
      name: 'no-dev-dependencies-in-src',
      severity: 'error',
      comment:
        'What the service runs must be in "dependencies": `npm ci --omit=dev` would leave devDependencies out.',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'Every import resolves to a file or an installed package.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
