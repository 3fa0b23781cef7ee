# One image for the four services of the distributed mode; SERVICE picks which one a container
# runs (api, orchestrator, sandbox, artifacts). One Dockerfile rather than four near-copies: the
# services share every library, and the image differs only by its start command.
#   docker build -f infra/docker/service.Dockerfile --build-arg SERVICE=api -t ats-api .
# better-sqlite3 (the embedded event store) compiles its native addon during npm ci: the build
# tools stay in this stage, the runtime image gets only node_modules.
FROM node:20-bookworm-slim AS deps
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

FROM node:20-bookworm-slim
ARG SERVICE
RUN test -n "$SERVICE" || (echo "--build-arg SERVICE=api|orchestrator|sandbox|artifacts is required" && false)
# The sandbox service needs bubblewrap (+ setpriv/prlimit from util-linux); the others do not run
# untrusted code, but one base keeps the images alike.
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap util-linux python3 \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY libs ./libs
COPY services ./services
ENV SERVICE=${SERVICE} HOST=0.0.0.0 PORT=3000 HEALTH_PORT=3001 DATA_DIR=/data
VOLUME /data
HEALTHCHECK --interval=10s --timeout=3s --retries=6 CMD node -e "const p=process.env.SERVICE==='api'?process.env.PORT:process.env.HEALTH_PORT;fetch('http://127.0.0.1:'+p+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["sh", "-c", "exec npm run start:$SERVICE"]
