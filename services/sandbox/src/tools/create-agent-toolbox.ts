import { createSearchProvider, describeSearchConfig } from '@app/search-provider';
import { Logger } from '@nestjs/common';
import type { SandboxSettings } from '../config/sandbox-settings';
import { AgentToolbox } from './agent-toolbox';
import { createFileTools } from './file-tools';
import { McpClientPool } from './mcp/mcp-client-pool';
import { assertMountsAvoid, stdioLauncherFor } from './mcp/mcp-stdio-launcher';
import { privateAddressGuardedFetch } from './mcp/private-address-guard';
import { shellTool } from './shell.tool';
import { createWebFetchTool } from './web-fetch/web-fetch.tool';
import { createWebSearchTool } from './web-search/web-search.tool';

/** The tools every task gets from this service's settings. */
export function createAgentToolbox(settings: SandboxSettings, dataDir: string): AgentToolbox {
  const logger = new Logger('AgentTools');
  const { mcp } = settings;
  assertMountsAvoid(mcp.servers, dataDir);
  const stdioLauncher = stdioLauncherFor(settings.provider);
  const pool = new McpClientPool(mcp.limits, privateAddressGuardedFetch(mcp.allowHosts), stdioLauncher, (message) => logger.warn(message));
  const servers = Object.keys(mcp.servers);
  if (servers.length > 0) logger.log(`MCP servers of the service: ${servers.join(', ')}; ${stdioLauncher.description}`);
  logger.log(describeSearchConfig(settings.search));
  const webSearch = settings.search ? [createWebSearchTool(createSearchProvider(settings.search), settings.search.maxResults)] : [];
  return new AgentToolbox([...createFileTools(), shellTool, ...webSearch, createWebFetchTool(settings.webFetch)], pool, mcp.servers);
}
