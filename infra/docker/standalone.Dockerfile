# The all-in-one service (npm start) as one container. Build from the repository root:
#   docker build -f infra/docker/standalone.Dockerfile -t agentic-task-service .
# Two stages: the first installs every dependency and compiles services/ and libs/ to dist/ (SWC,
# scripts/build-services.js) and the web console (Vite); the image keeps only that output and the
# production dependencies, and runs it on plain Node (no TypeScript compiler, no npm in the process tree).

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build-services.js scripts/build-console.js ./scripts/
COPY libs ./libs
COPY services ./services
RUN node scripts/build-services.js --force && node scripts/build-console.js --force

FROM node:20-bookworm-slim
# bubblewrap is the sandbox; util-linux brings setpriv and prlimit.
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap util-linux python3 \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The API serves the console's build from here (services/api/src/console/console-assets.ts).
COPY --from=build /app/services/api/console/dist ./services/api/console/dist
ENV HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD node -e "fetch('http://127.0.0.1:3000/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/services/standalone/src/main.js"]
