/**
 * An outgoing connection (web_fetch, a task's MCP server, a webhook, the sandbox's egress proxy)
 * would reach an address that is not public, and its `host:port` is not in the allow-list named
 * by `allowSetting`. For a literal address the message says what kind it is (the caller wrote
 * it); for a name it never says what the name resolved to, so a tenant learns nothing about
 * internal names from a refusal.
 */
export class AddressRefusedError extends Error {
  readonly code = 'NETWORK.ADDRESS_REFUSED';
  constructor(host: string, address: string, reason: string, allowSetting: string) {
    const what = host === address ? `${address} is ${reason}` : `${host} is not a public address`;
    super(`refused: ${what}; only public addresses are reached (hosts in ${allowSetting} excepted)`);
    this.name = 'AddressRefusedError';
  }
}

/** A name resolved to nothing: there is no address to judge, let alone connect to. */
export class NoAddressError extends Error {
  readonly code = 'NETWORK.NO_ADDRESS';
  constructor(host: string) {
    super(`${host} did not resolve to any address`);
    this.name = 'NoAddressError';
  }
}
