# Identity GraphQL gateway. Runs the TypeScript sources directly with tsx (a runtime
# dependency), so there is no build step. Configuration: environment variables (README.md).
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
WORKDIR /app
ENV HOST=0.0.0.0 PORT=4000 NODE_ENV=production DATA_DIR=/data
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY src ./src
# /data keeps the embedded event log (when MONGODB_URL is unset), the local signing
# key (when JWKS_URL is unset) and the code HMAC and IdP secret keys (when CODE_HMAC_KEY and
# IDP_SECRET_KEY are unset).
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 4000
# node itself is the main process, so SIGTERM/SIGINT reach the gateway's shutdown handler.
CMD ["node", "--import", "tsx", "src/main.ts"]
