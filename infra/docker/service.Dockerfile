# One image for the four services of the distributed mode; SERVICE picks which one a container
# runs (api, orchestrator, sandbox, artifacts). One Dockerfile rather than four near-copies: the
# services share every library, and the image differs only by its start command.
#   docker build -f infra/docker/service.Dockerfile --build-arg SERVICE=api -t ats-api .
# Three stages, as in standalone.Dockerfile: `build` compiles services/ and libs/ to dist/ (with the
# Temporal workflow bundle, and the web console, which the api serves), `prod-deps` installs the production dependencies only (both
# with the toolchain better-sqlite3's native addon needs); the image keeps only their output and
# runs it on plain Node.

FROM node:20-bookworm-slim AS toolchain
ARG SERVICE
RUN test -n "$SERVICE" || (echo "--build-arg SERVICE=api|orchestrator|sandbox|artifacts is required" && false)
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
COPY scripts/build-services.js scripts/bundle-workflows.js scripts/build-console.js scripts/build-native.sh ./scripts/
# The sandbox's fanotify helper, built with the toolchain's gcc into dist/native (copied with dist/ below).
COPY native ./native
RUN bash scripts/build-native.sh && test -x dist/native/ats-fswatch
COPY libs ./libs
COPY services ./services
# The Temporal workers (orchestrator, api) load the pre-built workflow bundle (no webpack at run time).
RUN node scripts/build-services.js --force && node scripts/bundle-workflows.js --force && node scripts/build-console.js --force

FROM toolchain AS prod-deps
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ARG SERVICE
# The sandbox service needs bubblewrap, util-linux (prlimit, mount) and e2fsprogs (mkfs.ext4); the others do not run
# untrusted code, but one base keeps the images alike.
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap util-linux e2fsprogs python3 \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The api serves the console's build from here (services/api/src/console/console-assets.ts).
COPY --from=build /app/services/api/console/dist ./services/api/console/dist
ENV SERVICE=${SERVICE} HOST=0.0.0.0 PORT=3000 HEALTH_PORT=3001 DATA_DIR=/data
VOLUME /data
HEALTHCHECK --interval=10s --timeout=3s --retries=6 CMD node -e "const p=process.env.SERVICE==='api'?process.env.PORT:process.env.HEALTH_PORT;fetch('http://127.0.0.1:'+p+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# exec: node replaces the shell, so it is PID 1 and receives the container's SIGTERM itself.
CMD ["sh", "-c", "exec node dist/services/$SERVICE/src/main.js"]
