export * from './search-provider.port';
export * from './search-provider.config';
export { SearxngProvider } from './searxng/searxng.provider';
export { BraveProvider } from './brave/brave.provider';
export { TavilyProvider } from './tavily/tavily.provider';
