import { describe, expect, it } from 'vitest';
import { checkAddress, classify, inNetwork, isNetwork, parseAddress } from './address.js';

const DENY = { allowPrivate: false, allowNetworks: [] };
const PRIVATE = { allowPrivate: true, allowNetworks: [] };

function cls(a: string): string {
  const b = parseAddress(a);
  return b ? classify(b) : 'invalid';
}

describe('webhook target addresses (SSRF)', () => {
  it('classifies every range the refusal names, in each spelling', () => {
    const table: [string, string][] = [
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['::1', 'loopback'],
      ['0:0:0:0:0:0:0:1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['169.254.169.254', 'link_local'],
      ['fe80::1', 'link_local'],
      ['fe80::1%eth0', 'link_local'],
      ['febf::1', 'link_local'],
      ['100.64.0.1', 'cgnat'],
      ['100.127.255.255', 'cgnat'],
      ['fc00::1', 'unique_local'],
      ['fd12:3456::1', 'unique_local'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['224.0.0.1', 'multicast'],
      ['ff02::1', 'multicast'],
      ['255.255.255.255', 'broadcast'],
      ['240.0.0.1', 'reserved'],
      // IPv6 forms that reach an IPv4 address take its class.
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['0:0:0:0:0:ffff:7f00:0001', 'loopback'],
      ['::ffff:10.0.0.1', 'private'],
      ['::ffff:169.254.169.254', 'link_local'],
      ['::127.0.0.1', 'loopback'],
      ['64:ff9b::7f00:1', 'loopback'],
      ['64:ff9b::a9fe:a9fe', 'link_local'],
      ['2002:7f00:1::', 'loopback'],
      ['2002:0a00:0001::1', 'private'],
      ['2001:db8::1', 'reserved'],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
      ['8.8.8.8', 'public'],
      ['172.32.0.1', 'public'],
      ['100.128.0.1', 'public'],
      ['2606:4700:4700::1111', 'public'],
      ['::ffff:8.8.8.8', 'public'],
      ['64:ff9b::808:808', 'public'],
      ['localhost', 'invalid'],
      ['127.1', 'invalid'],
      ['0x7f.0.0.1', 'invalid'],
      ['1.2.3.4.5', 'invalid'],
    ];
    for (const [a, want] of table) expect([a, cls(a)]).toEqual([a, want]);
  });

  it('refuses non-public targets by default, allows them only when told, and never the unusable ones', () => {
    for (const a of ['127.0.0.1', '::ffff:127.0.0.1', '10.0.0.1', '169.254.169.254', 'fe80::1', '100.64.0.1', 'fd00::1']) {
      expect(checkAddress(a, DENY).ok).toBe(false);
      expect(checkAddress(a, PRIVATE).ok).toBe(true);
    }
    for (const a of ['0.0.0.0', '::', '224.0.0.1', 'ff02::1', '255.255.255.255', 'not-an-ip']) expect(checkAddress(a, PRIVATE).ok).toBe(false);
    expect(checkAddress('8.8.8.8', DENY)).toEqual({ ok: true, address: '8.8.8.8', family: 4 });
  });

  it('an allowed network admits its addresses (in either spelling) and no others', () => {
    const policy = { allowPrivate: false, allowNetworks: ['10.1.2.0/24', 'fd00:1::/32'] };
    expect(checkAddress('10.1.2.200', policy).ok).toBe(true);
    expect(checkAddress('::ffff:10.1.2.200', policy).ok).toBe(true);
    expect(checkAddress('10.1.3.1', policy).ok).toBe(false);
    expect(checkAddress('fd00:1:ffff::1', policy).ok).toBe(true);
    expect(checkAddress('fd00:2::1', policy).ok).toBe(false);
    expect(checkAddress('127.0.0.1', policy).ok).toBe(false);
    expect(inNetwork(parseAddress('127.0.0.1')!, '127.0.0.1')).toBe(true);
    for (const bad of ['10.0.0.0/33', '10.0.0.0/-1', '10.0.0.0/8/8', 'example.com/8', '::1/129', '10.0.0.0/0x8']) expect(isNetwork(bad)).toBe(false);
    for (const good of ['10.0.0.0/8', '::1/128', '127.0.0.1']) expect(isNetwork(good)).toBe(true);
  });
});
