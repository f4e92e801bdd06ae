# Identity GraphQL gateway, bundled to JavaScript (npm run build: dist/gateway) and run by
# node itself, without a TypeScript loader. Configuration: environment variables (README.md).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/bundle.mjs ./scripts/
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
WORKDIR /app
ENV HOST=0.0.0.0 PORT=4000 NODE_ENV=production DATA_DIR=/data
# start:prod's environment (README, "Memory"): two malloc arenas, not one per thread.
ENV MALLOC_ARENA_MAX=2
# The bundle holds every dependency but the native @node-rs packages, which stay in node_modules.
COPY --from=build /app/node_modules ./node_modules
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
# The V8 flags are package.json's start:prod ones (README, "Memory"): a smaller young
# generation and old space grown by at most 2x live data keep RSS near what is live.
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=100", "dist/gateway/main.js"]
