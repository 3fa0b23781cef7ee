import { BlockList, isIP } from 'node:net';

// Ranges a fetch must never reach unless the operator allow-lists the host. Checked in order,
// so the metadata endpoints are named as such rather than as plain link-local or private.
const IPV4_RANGES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['the cloud metadata address', ['169.254.169.254/32']],
  ['the broadcast address', ['255.255.255.255/32']],
  ['an unspecified ("this network") address', ['0.0.0.0/8']],
  ['a loopback address', ['127.0.0.0/8']],
  ['a private address', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']],
  ['a link-local address', ['169.254.0.0/16']],
  ['a carrier-grade NAT (shared) address', ['100.64.0.0/10']],
  ['a multicast address', ['224.0.0.0/4']],
  // Protocol assignments, documentation, benchmarking, the 6to4 relay and the old class E.
  [
    'a reserved address',
    ['192.0.0.0/24', '192.0.2.0/24', '192.88.99.0/24', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '240.0.0.0/4'],
  ],
];

const IPV6_RANGES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['the cloud metadata address', ['fd00:ec2::254/128']],
  ['the unspecified address', ['::/128']],
  ['a loopback address', ['::1/128']],
  ['a private address', ['fc00::/7', 'fec0::/10']],
  ['a link-local address', ['fe80::/10']],
  ['a multicast address', ['ff00::/8']],
  // IETF protocol assignments (Teredo among them), documentation.
  ['a reserved address', ['2001::/23', '2001:db8::/32', '3fff::/20']],
];

const ipv4Rules = compile(IPV4_RANGES, 'ipv4');
const ipv6Rules = compile(IPV6_RANGES, 'ipv6');
const globalUnicastV6 = compile([['', ['2000::/3']]], 'ipv6')[0].list;

/**
 * Why `address` must not be fetched (e.g. "a loopback address"), or undefined for a public one.
 * IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4) are judged by that IPv4 address.
 */
export function forbiddenAddressReason(address: string): string | undefined {
  const ip = address.replace(/%.*$/, ''); // a zone id (fe80::1%eth0) says nothing about the range
  switch (isIP(ip)) {
    case 4:
      return firstMatch(ipv4Rules, ip, 'ipv4');
    case 6: {
      const embedded = embeddedIPv4(ip);
      if (embedded !== undefined) return firstMatch(ipv4Rules, embedded, 'ipv4');
      const reason = firstMatch(ipv6Rules, ip, 'ipv6');
      // Everything outside 2000::/3 is unassigned or special-purpose; nothing public lives there.
      return reason ?? (globalUnicastV6.check(ip, 'ipv6') ? undefined : 'a reserved address');
    }
    default:
      return 'not an IP address';
  }
}

function embeddedIPv4(ip: string): string | undefined {
  const g = ipv6Groups(ip);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return dotted(g[6], g[7]); // ::ffff:a.b.c.d, IPv4-mapped
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return dotted(g[6], g[7]); // 64:ff9b::/96, NAT64
  if (g[0] === 0x2002) return dotted(g[1], g[2]); // 2002::/16, 6to4
  return undefined;
}

// Expands an address that isIP already accepted into its eight 16-bit groups.
function ipv6Groups(ip: string): number[] {
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  const hex = tail ? ip.slice(0, tail.index) + groupsOf(tail.slice(1).map(Number)) : ip;
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const [head, rest] = hex.split('::');
  if (rest === undefined) return parse(head);
  const [before, after] = [parse(head), parse(rest)];
  return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
}

const groupsOf = ([a, b, c, d]: number[]) => `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
const dotted = (high: number, low: number) => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');

type Rules = ReadonlyArray<{ reason: string; list: BlockList }>;

function compile(ranges: ReadonlyArray<readonly [string, readonly string[]]>, type: 'ipv4' | 'ipv6'): Rules {
  return ranges.map(([reason, cidrs]) => {
    const list = new BlockList();
    for (const cidr of cidrs) {
      const [network, prefix] = cidr.split('/');
      list.addSubnet(network, Number(prefix), type);
    }
    return { reason, list };
  });
}

function firstMatch(rules: Rules, ip: string, type: 'ipv4' | 'ipv6'): string | undefined {
  return rules.find((rule) => rule.list.check(ip, type))?.reason;
}
