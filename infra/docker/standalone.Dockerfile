# The all-in-one service (npm start) as one container. Build from the repository root:
#   docker build -f infra/docker/standalone.Dockerfile -t agentic-task-service .
# better-sqlite3 (the embedded event store) compiles its native addon during npm ci: the build
# tools stay in this stage, the runtime image gets only node_modules.
FROM node:20-bookworm-slim AS deps
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

FROM node:20-bookworm-slim
# bubblewrap is the sandbox; util-linux brings setpriv and prlimit.
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap util-linux python3 \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY libs ./libs
COPY services ./services
ENV HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD node -e "fetch('http://127.0.0.1:3000/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["npm", "start"]
