// The layer rules of src/ (docs/architecture.md): a module may import only what sits below it.
//   entry and wiring  main.ts, server.ts, cli/, worker-main.ts, stores.ts, node-ids.ts
//   faces             graphql/, schema/, wire/, graphiql*.ts
//   operations        operations.ts: the one interface the faces call (and what they may use besides)
//   the edge          http/ (HTTP only: no GraphQL, no gRPC)
//   commands          commands/ (the operations; no drivers, no faces, no edge)
//   upstream          upstream/ (the operations in front of ZITADEL, beside the commands: their
//                     input rules only, ZITADEL's clients, no store, no edge, no face)
//   model             model/ (entities, their events and fold; no store, no drivers)
//   ports             store/port.ts (with read-models.ts and weight.ts, the types its reads use),
//                     codes/port.ts, notify/port.ts
//   adapters          the rest of store/, codes/, notify/
//   shared            auth/, config, errors, log, progress, limits, timed, data-dir, redis, start-errors,
//                     net/, proto/ (descriptors no package carries), tracing/ (OpenTelemetry spans, names only):
//                     usable from every layer below the entry
// One rule per arrow that must not run up. `npx depcruise src --config .dependency-cruiser.cjs`
// (in .ci/run) fails on any violation: there is no baseline. docs/architecture.md says why
// each arrow points the way it does.

const WIRING = '^src/(stores|node-ids)\\.ts$';
const ENTRY = `^src/(main|server|upstream-gateway|worker-main)\\.ts$|^src/cli/|${WIRING}`;
const FACES = '^src/(graphql|schema|wire)/|^src/graphiql[^/]*\\.ts$';
const EDGE = '^src/http/';
const COMMANDS = '^src/commands/';
const UPSTREAM = '^src/upstream/';
const MODEL = '^src/model/';
const STORE_PORT = '^src/store/(port|read-models|weight)\\.ts$';
const PORTS = `${STORE_PORT}|^src/(codes|notify)/port\\.ts$`;
const ADAPTERS = '^src/(store|codes|notify)/';
const SHARED = '^src/(auth/|net/|proto/|tracing/|(config|errors|log|progress|limits|timed|data-dir|redis|start-errors)\\.ts$)';

// Packages by what they are (resolved paths, or bare names when a package does not resolve).
const pkg = (names) => `(^|node_modules/)(${names})(/|$)`;
const GRAPHQL_PACKAGES = pkg('graphql|graphql-[^/]+|@graphql-[^/]+|@pothos|@envelop|@escape\\.tech|@apollo');
const RPC_PACKAGES = pkg('@connectrpc|@bufbuild|@zitadel');
const DRIVERS = `${pkg('mongodb|ioredis')}|^(node:)?sqlite$`;

const rule = (name, comment, from, to) => ({ name, comment, severity: 'error', from, to });

module.exports = {
  forbidden: [
    rule(
      'no-circular',
      'No import cycles in src: a cycle makes two modules one, whatever their folders say.',
      { path: '^src/' },
      {
        circular: true,
      },
    ),

    rule(
      'entry-imported-by-none',
      'Entry points and the wiring (which stores, which node id) sit on top: nothing below imports them.',
      { path: '^src/', pathNot: ENTRY },
      { path: ENTRY },
    ),

    rule(
      'wiring-below-the-edge',
      'The wiring opens stores and leases node ids for the server; it imports neither the edge nor a face (metrics reach the stores as an observer passed in).',
      { path: WIRING },
      { path: `${EDGE}|${FACES}` },
    ),

    rule(
      'faces-over-the-edge',
      'The GraphQL and wire faces sit above the edge: the edge, commands, model, ports, adapters and shared modules import no face.',
      { path: '^src/', pathNot: `${ENTRY}|${FACES}` },
      { path: FACES },
    ),
    rule(
      'faces-apart',
      'The GraphQL face and the wire face each stand on the edge and the commands, not on each other.',
      { path: '^src/(graphql|schema)/|^src/graphiql[^/]*\\.ts$' },
      { path: '^src/wire/' },
    ),
    rule(
      'wire-not-on-graphql',
      'The wire face (gRPC, Connect, REST) does not use the GraphQL face.',
      { path: '^src/wire/' },
      { path: '^src/(graphql|schema)/|^src/graphiql[^/]*\\.ts$' },
    ),

    rule(
      'faces-through-operations',
      'A face reaches what serves the operations only through src/operations.ts (the calls, the context, the result types), never a command module: a second implementation of Operations (a gateway in front of ZITADEL) must be able to replace the commands without touching a face.',
      { path: FACES },
      { path: `${COMMANDS}|${UPSTREAM}` },
    ),

    rule(
      'upstream-beside-commands',
      "Upstream mode runs the commands' input rules before any call (the same errors as the embedded mode) and nothing else of them: it is the other implementation of the operations, not a layer over the commands.",
      { path: UPSTREAM },
      { path: COMMANDS, pathNot: '^src/commands/([a-z0-9-]+-inputs|rules|org-header)\\.ts$' },
    ),
    rule(
      'upstream-no-stores',
      'Upstream mode has no store, no code store and no delivery of its own (ZITADEL persists, sends codes, verifies WebAuthn), and stands below the edge and the faces.',
      { path: UPSTREAM },
      { path: `${ADAPTERS}|${DRIVERS}|${EDGE}|${FACES}|${GRAPHQL_PACKAGES}`, pathNot: STORE_PORT },
    ),
    rule(
      'commands-not-on-upstream',
      'The commands do not know upstream mode exists.',
      { path: `${COMMANDS}|${MODEL}|${ADAPTERS}|${PORTS}` },
      { path: UPSTREAM },
    ),

    rule(
      'edge-speaks-http-only',
      'The HTTP edge (listeners, body limits, rate limits, metrics) knows no GraphQL and no gRPC library.',
      { path: EDGE },
      { path: `${GRAPHQL_PACKAGES}|${RPC_PACKAGES}` },
    ),
    rule(
      'edge-over-commands',
      'Below the edge nothing imports it: commands, model, ports, adapters and shared modules do not import src/http.',
      { path: '^src/', pathNot: `${ENTRY}|${FACES}|${EDGE}` },
      { path: EDGE },
    ),

    rule(
      'edge-not-on-commands',
      'The edge sizes its body caps from src/limits.ts and hands requests to the faces: it imports no command.',
      { path: EDGE },
      { path: COMMANDS },
    ),

    rule(
      'commands-no-faces-no-drivers',
      'Commands run the operations on the model through the ports: no GraphQL, gRPC, HTTP or database driver.',
      { path: COMMANDS },
      { path: `${GRAPHQL_PACKAGES}|${RPC_PACKAGES}|${DRIVERS}|^(node:)?(http|http2)$` },
    ),
    rule(
      'commands-through-ports',
      'Commands reach storage, codes and delivery through their ports, never an adapter.',
      { path: COMMANDS },
      { path: ADAPTERS, pathNot: `${PORTS}|^src/codes/codes\\.ts$` },
    ),

    rule('model-below-commands', 'The model (entities, their events and fold) imports no command.', { path: MODEL }, { path: COMMANDS }),
    rule(
      'model-owns-its-events',
      'The model imports no store, code or delivery module, not even a port: the ports are written in its terms.',
      { path: MODEL },
      { path: ADAPTERS },
    ),
    rule('model-no-drivers', 'The model uses no database or Redis driver.', { path: MODEL }, { path: DRIVERS }),

    rule(
      'ports-below-adapters',
      'A port names what its adapters implement; it imports none of them.',
      { path: PORTS },
      { path: ADAPTERS, pathNot: PORTS },
    ),
    rule(
      'adapters-below-commands',
      'Adapters (stores, code stores, delivery) implement ports: they import no command.',
      { path: ADAPTERS },
      { path: COMMANDS },
    ),

    rule(
      'shared-below-everything',
      'auth, config, errors, log, limits, timed, data-dir, redis, net and tracing serve every layer, so they import none: no command, model, store, code or delivery module.',
      { path: SHARED },
      { path: `${COMMANDS}|${MODEL}|${ADAPTERS}` },
    ),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Types-only imports count: an `import type` from a layer above is still an arrow up.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
