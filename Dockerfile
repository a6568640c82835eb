# syntax=docker/dockerfile:1.7
# Multi-stage build: compile with dev dependencies, run with production dependencies only, as a
# non-root user. Prisma needs no native engine at run time (driver adapter), so none is shipped.

ARG NODE_VERSION=20.19

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
ENV PRISMA_SCHEMA_ENGINE_BINARY=/bin/false
COPY package.json package-lock.json ./
COPY scripts/prisma-generate.mjs scripts/prisma-generate.mjs
COPY prisma prisma
COPY prisma.config.ts ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src src
RUN npm run build

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the postinstall generates the Prisma client, which the build stage already did.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /data && chown node:node /data
COPY --from=deps --chown=node:node /app/node_modules node_modules
COPY --from=build --chown=node:node /app/dist dist
# The support console's static files (tsc compiles only .ts).
COPY --from=build --chown=node:node /app/src/support/console/assets dist/support/console/assets
COPY --chown=node:node package.json ./
COPY --chown=node:node bin bin
COPY --chown=node:node prisma/migrations prisma/migrations
COPY --chown=node:node config config
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# tini forwards SIGTERM so the gateway shuts down gracefully (finishes in-flight requests and jobs).
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/gateway.js"]
CMD ["serve"]
