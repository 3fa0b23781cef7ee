# The all-in-one service (npm start) as one container. Build from the repository root:
#   docker build -f infra/docker/standalone.Dockerfile -t agentic-task-service .
# Three stages: `build` installs every dependency and compiles services/ and libs/ to dist/ (SWC,
# scripts/build-services.js) and the web console (Vite); `prod-deps` installs the production
# dependencies only. better-sqlite3 (the embedded event store) compiles its native addon during
# npm ci, so both have the build tools; the image keeps only dist/, the console build and the
# production node_modules, and runs them on plain Node (no TypeScript compiler, no npm in the
# process tree, no compiler toolchain).

FROM node:20-bookworm-slim AS toolchain
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# Before any npm ci: its postinstall (patch-package, a production dependency) applies these to
# node_modules, in both stages (docs/contributing.md "Patched dependencies").
COPY patches ./patches

FROM toolchain AS build
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build-services.js scripts/build-console.js scripts/build-native.sh ./scripts/
# The sandbox's fanotify helper, built with the toolchain's gcc into dist/native (copied with dist/ below).
COPY native ./native
RUN bash scripts/build-native.sh && test -x dist/native/ats-fswatch
COPY libs ./libs
COPY services ./services
RUN node scripts/build-services.js --force && node scripts/build-console.js --force

FROM toolchain AS prod-deps
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
# bubblewrap is the sandbox; util-linux brings prlimit and mount, e2fsprogs mkfs.ext4 (a filesystem per workspace).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap util-linux e2fsprogs python3 \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The API serves the console's build from here (services/api/src/console/console-assets.ts).
COPY --from=build /app/services/api/console/dist ./services/api/console/dist
ENV HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD node -e "fetch('http://127.0.0.1:3000/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The V8 heap limit of package.json's start script (BENCHMARKS.md, issue 19: RSS under load).
CMD ["node", "--max-old-space-size=256", "dist/services/standalone/src/main.js"]
