/**
 * An outgoing connection (web_fetch, a task's MCP server, a webhook) would reach an address that
 * is not public, and its `host:port` is not in the allow-list named by `allowSetting`.
 */
export class AddressRefusedError extends Error {
  readonly code = 'NETWORK.ADDRESS_REFUSED';
  constructor(host: string, address: string, reason: string, allowSetting: string) {
    const via = host === address ? `${address} is` : `${host} resolves to ${address},`;
    super(`refused: ${via} ${reason}; only public addresses are reached (hosts in ${allowSetting} excepted)`);
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
