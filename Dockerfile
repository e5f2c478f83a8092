# syntax=docker/dockerfile:1

# ---- build: install dependencies, compiling better-sqlite3 when no prebuilt binary fits ----
FROM node:24-bookworm-slim AS build
WORKDIR /app
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci
# The service runs TypeScript through tsx, a production dependency: pruning keeps it.
RUN npm prune --omit=dev

# ---- runtime: no compilers, non-root, data on a volume ----
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    DATABASE_PATH=/data/baton.db \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
# Application files stay root-owned (read-only to the service); only /data is writable.
COPY --from=build /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY migrations ./migrations
COPY src ./src
COPY web ./web
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# One process: node itself receives SIGTERM (the tsx CLI would sit in between as a parent).
CMD ["node", "--import", "tsx", "src/main.ts"]
