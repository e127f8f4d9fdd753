/**
 * @module control-plane/webhooks/address
 * Which addresses a webhook may connect to (SSRF). An address is parsed to its bytes (so every
 * spelling of one address is one address: `::ffff:127.0.0.1`, `::ffff:7f00:1`, `0:0:0:0:0:ffff:7f00:1`)
 * and classified; forms that carry an IPv4 address inside IPv6 (mapped, compatible, NAT64, 6to4)
 * are classified by the IPv4 address they reach. Anything that does not parse is refused.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** Why an address is not a public unicast one. */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'cgnat'
  | 'unique_local'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'invalid';

/** Never a unicast destination, whatever the operator allows. */
const NEVER: ReadonlySet<AddressClass> = new Set(['unspecified', 'multicast', 'broadcast', 'invalid']);

export interface AddressPolicy {
  /** Loopback, private, link-local, CGNAT, unique-local and reserved ranges allowed (tests, LAN receivers). */
  allowPrivate: boolean;
  /** CIDR ranges allowed besides public addresses (checked on the resolved address). */
  allowNetworks: readonly string[];
}

export type AddressVerdict = { ok: true; address: string; family: 4 | 6 } | { ok: false; address: string; class: AddressClass };

/** Bytes of an IPv4 (4) or IPv6 (16) address, or null. A zone (`%eth0`) is dropped. */
export function parseAddress(text: string): Uint8Array | null {
  const a = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (isIPv4(a)) return Uint8Array.from(a.split('.').map(Number));
  const bare = a.split('%')[0] ?? '';
  if (!isIPv6(bare)) return null;
  let head = bare;
  let v4: number[] = [];
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(head);
  if (dotted) {
    v4 = dotted[1]!.split('.').map(Number);
    head = `${head.slice(0, dotted.index)}:0:0`;
  }
  const [left, right] = head.includes('::') ? head.split('::') : [head, undefined];
  const l = left ? left.split(':') : [];
  const r = right ? right.split(':') : [];
  const groups = right === undefined ? l : [...l, ...Array<string>(8 - l.length - r.length).fill('0'), ...r];
  if (groups.length !== 8) return null;
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    const n = parseInt(g, 16);
    out[2 * i] = n >> 8;
    out[2 * i + 1] = n & 0xff;
  });
  if (dotted) out.set(v4, 12);
  return out;
}

function inV4(b: Uint8Array, prefix: readonly number[], bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const byte = i >> 3;
    const mask = 0x80 >> (i & 7);
    if (((b[byte] ?? 0) & mask) !== ((prefix[byte] ?? 0) & mask)) return false;
  }
  return true;
}

function classifyV4(b: Uint8Array): AddressClass {
  if (inV4(b, [255, 255, 255, 255], 32)) return 'broadcast';
  if (inV4(b, [0], 8)) return 'unspecified'; // 0.0.0.0/8 "this network"
  if (inV4(b, [127], 8)) return 'loopback';
  if (inV4(b, [10], 8) || inV4(b, [172, 16], 12) || inV4(b, [192, 168], 16)) return 'private';
  if (inV4(b, [169, 254], 16)) return 'link_local';
  if (inV4(b, [100, 64], 10)) return 'cgnat';
  if (inV4(b, [224], 4)) return 'multicast';
  if (
    inV4(b, [240], 4) || // reserved
    inV4(b, [192, 0, 0], 24) || // IETF protocol assignments
    inV4(b, [192, 0, 2], 24) ||
    inV4(b, [198, 51, 100], 24) ||
    inV4(b, [203, 0, 113], 24) || // documentation
    inV4(b, [198, 18], 15) || // benchmarking
    inV4(b, [192, 88, 99], 24) // 6to4 relay anycast
  ) {
    return 'reserved';
  }
  return 'public';
}

/** The class of an address's bytes; IPv6 forms that carry IPv4 take the class of that IPv4. */
export function classify(b: Uint8Array): AddressClass {
  if (b.length === 4) return classifyV4(b);
  if (b.length !== 16) return 'invalid';
  const zero = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
  if (zero(0, 16)) return 'unspecified';
  if (zero(0, 15) && b[15] === 1) return 'loopback';
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated): the IPv4 address is reached.
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return classifyV4(b.subarray(12));
  if (zero(0, 12)) return classifyV4(b.subarray(12));
  // 64:ff9b::/96 (NAT64 well-known prefix): the gateway connects to the embedded IPv4 address.
  if (inV4(b, [0x00, 0x64, 0xff, 0x9b], 32) && zero(4, 12)) return classifyV4(b.subarray(12));
  // 2002::/16 (6to4): bytes 2..5 are the IPv4 address of the relay's destination.
  if (inV4(b, [0x20, 0x02], 16)) return classifyV4(b.subarray(2, 6));
  if (inV4(b, [0xfc], 7)) return 'unique_local';
  if (inV4(b, [0xfe, 0x80], 10)) return 'link_local';
  if (inV4(b, [0xfe, 0xc0], 10)) return 'private'; // site-local (deprecated)
  if (inV4(b, [0xff], 8)) return 'multicast';
  if (
    inV4(b, [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48) || // local-use NAT64
    inV4(b, [0x01, 0x00], 64) || // discard-only
    inV4(b, [0x20, 0x01, 0x00, 0x00], 32) || // Teredo (embeds an obfuscated IPv4 address)
    inV4(b, [0x20, 0x01, 0x0d, 0xb8], 32) || // documentation
    !inV4(b, [0x20], 3) // outside 2000::/3, the global unicast space
  ) {
    return 'reserved';
  }
  return 'public';
}

/** Whether `b` lies in `cidr` (`10.0.0.0/8`, `::1/128`, or a bare address); false for a malformed one. */
export function inNetwork(b: Uint8Array, cidr: string): boolean {
  const [addr, bitsText] = cidr.split('/');
  const net = parseAddress(addr ?? '');
  if (!net) return false;
  const bits = bitsText === undefined ? net.length * 8 : Number(bitsText);
  if (!Number.isInteger(bits) || bits < 0 || bits > net.length * 8 || (bitsText !== undefined && !/^[0-9]{1,3}$/.test(bitsText))) return false;
  // An IPv4 network also matches the IPv4-mapped form of its addresses (one address, two spellings).
  const x = b.length === 16 && net.length === 4 && b.subarray(0, 10).every((v) => v === 0) && b[10] === 0xff && b[11] === 0xff ? b.subarray(12) : b;
  if (x.length !== net.length) return false;
  return inV4(x, [...net], bits);
}

/** A CIDR as `allow_networks` takes it (checked when the state loads). */
export function isNetwork(cidr: string): boolean {
  const [addr, bits, ...rest] = cidr.split('/');
  const net = parseAddress(addr ?? '');
  if (!net || rest.length > 0) return false;
  return bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= net.length * 8);
}

/**
 * Whether a webhook may connect to `address` under `policy`: public unicast always; an address in
 * `allowNetworks` or (with `allowPrivate`) a non-public unicast one when the operator said so;
 * unspecified, multicast, broadcast and unparsable never.
 */
export function checkAddress(address: string, policy: AddressPolicy): AddressVerdict {
  const b = parseAddress(address);
  if (!b) return { ok: false, address, class: 'invalid' };
  const cls = classify(b);
  const family = b.length === 4 ? 4 : 6;
  if (cls === 'public') return { ok: true, address, family };
  if (NEVER.has(cls)) return { ok: false, address, class: cls };
  if (policy.allowPrivate || policy.allowNetworks.some((n) => inNetwork(b, n))) return { ok: true, address, family };
  return { ok: false, address, class: cls };
}
