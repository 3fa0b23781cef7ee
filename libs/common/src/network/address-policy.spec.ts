import { forbiddenAddressReason } from './address-policy';

describe('forbiddenAddressReason', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['127.255.0.9', 'a loopback address'],
    ['10.1.2.3', 'a private address'],
    ['172.16.0.1', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['169.254.169.254', 'the cloud metadata address'],
    ['169.254.1.1', 'a link-local address'],
    ['0.0.0.0', 'an unspecified ("this network") address'],
    ['100.64.0.1', 'a carrier-grade NAT (shared) address'],
    ['100.127.255.254', 'a carrier-grade NAT (shared) address'],
    ['224.0.0.251', 'a multicast address'],
    ['255.255.255.255', 'the broadcast address'],
    ['240.0.0.1', 'a reserved address'],
    ['192.0.2.10', 'a reserved address'],
    ['198.18.0.1', 'a reserved address'],
  ])('refuses IPv4 %s as %s', (address, reason) => {
    expect(forbiddenAddressReason(address)).toBe(reason);
  });

  it.each([
    ['::1', 'a loopback address'],
    ['::', 'the unspecified address'],
    ['fc00::1', 'a private address'],
    ['fd12:3456::1', 'a private address'],
    ['fd00:ec2::254', 'the cloud metadata address'],
    ['fe80::1', 'a link-local address'],
    ['fe80::1%eth0', 'a link-local address'],
    ['ff02::1', 'a multicast address'],
    ['2001:db8::1', 'a reserved address'],
    ['100::1', 'a reserved address'],
  ])('refuses IPv6 %s as %s', (address, reason) => {
    expect(forbiddenAddressReason(address)).toBe(reason);
  });

  it.each([
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:7f00:1', 'a loopback address'],
    ['::ffff:169.254.169.254', 'the cloud metadata address'],
    ['::ffff:a00:1', 'a private address'],
    ['64:ff9b::c0a8:101', 'a private address'],
    ['2002:7f00:1::', 'a loopback address'],
  ])('judges IPv6 %s by the IPv4 address inside it: %s', (address, reason) => {
    expect(forbiddenAddressReason(address)).toBe(reason);
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '100.63.255.255',
    '100.128.0.0',
    '172.32.0.1',
    '169.253.255.255',
    '2606:4700::1111',
    '2a00:1450:4001::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('lets public %s through', (address) => {
    expect(forbiddenAddressReason(address)).toBeUndefined();
  });

  it('refuses what is not an IP address at all', () => {
    expect(forbiddenAddressReason('localhost')).toBe('not an IP address');
  });
});
