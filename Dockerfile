# Identity GraphQL gateway, bundled to JavaScript (npm run build: dist/gateway) and run by
# node itself, without a TypeScript loader. Configuration: environment variables
# (docs/configuration.md). Base images are pinned to exact versions so that a rebuild gets the
# Node the bench and the tests measured, not whatever a floating tag points at that day.
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/bundle.mjs ./scripts/
COPY src ./src
RUN npm run build

# A clean install of the production dependencies alone, rather than pruning the build stage's
# tree: nothing of the dev tree (the npm `node` package, vitest, playwright, codegen) can be left
# behind by a prune that misses a hoisted package.
FROM node:24.21.0-bookworm-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:24.21.0-bookworm-slim
WORKDIR /app
ENV HOST=0.0.0.0 PORT=4000 NODE_ENV=production DATA_DIR=/data
# start:prod's environment (docs/operations.md, "Memory"): two malloc arenas, not one per thread.
ENV MALLOC_ARENA_MAX=2
# The bundle holds every dependency but the native @node-rs packages, which stay in node_modules.
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist/gateway ./dist/gateway
COPY package.json ./
# /data keeps the embedded event store, events.sqlite (when MONGODB_URL is unset), the local signing
# key (when JWKS_URL is unset) and the code HMAC and IdP secret keys (when CODE_HMAC_KEY and
# IDP_SECRET_KEY are unset).
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 4000
# node itself is the main process, so SIGTERM/SIGINT reach the gateway's shutdown handler.
# The V8 flags are package.json's start:prod ones (docs/operations.md, "Memory"): a smaller young
# generation and old space grown by at most 2x live data keep RSS near what is live.
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=50", "dist/gateway/main.js"]
