import { ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { ed25519PublicKey, signEd25519, verifyEd25519, verifyEd25519Async } from './ed25519.js';

const L = (1n << 252n) + 27742317777372353535851937790883648493n;
const le = (b: Uint8Array) => BigInt(`0x${Buffer.from(b).reverse().toString('hex') || '0'}`);
const toLe = (n: bigint) => Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse());
const noble = (sig: Uint8Array, msg: Uint8Array, pub: Uint8Array) => {
  try {
    return ed25519.verify(sig, msg, pub, { zip215: false });
  } catch {
    return false;
  }
};

// Hand-made signatures over chosen points, to reach the cases where OpenSSL and the strict
// cofactored check could disagree.
function signWith(r: bigint, R: ReturnType<typeof ed25519.Point.fromBytes>, a: bigint, A: Uint8Array, msg: Uint8Array): Uint8Array {
  const Rb = R.toBytes();
  const k = le(sha512(Uint8Array.from([...Rb, ...A, ...msg]))) % L;
  const S = (r + k * a) % L;
  return Uint8Array.from([...Rb, ...toLe(S)]);
}

describe('verifyEd25519 always gives the strict @noble/curves answer', () => {
  const sk = new Uint8Array(32).fill(4);
  const pub = ed25519PublicKey(sk);
  const msg = new TextEncoder().encode('vault');

  it('signs exactly as @noble/curves does (RFC 8032 is deterministic)', () => {
    for (let i = 0; i < 20; i++) {
      const key = new Uint8Array(32).fill(i);
      const m = new Uint8Array([i, i + 1, i + 2]);
      expect(Buffer.from(signEd25519(m, key))).toEqual(Buffer.from(ed25519.sign(m, key)));
    }
  });

  it('agrees on valid, corrupted and cross-key signatures', () => {
    for (let i = 0; i < 50; i++) {
      const key = ed25519.utils.randomSecretKey();
      const m = ed25519.utils.randomSecretKey();
      const sig = signEd25519(m, key);
      const pk = ed25519PublicKey(key);
      expect(verifyEd25519(sig, m, pk)).toBe(true);
      const bad = Uint8Array.from(sig);
      bad[i % 64] = (bad[i % 64] as number) ^ 1;
      expect(verifyEd25519(bad, m, pk)).toBe(noble(bad, m, pk));
      expect(verifyEd25519(sig, m, pub)).toBe(false);
    }
  });

  it('refuses a non-canonical S (S + L), which is the same signature malleated', () => {
    const sig = signEd25519(msg, sk);
    const s = le(sig.subarray(32)) + L;
    const malleated = Uint8Array.from([...sig.subarray(0, 32), ...toLe(s)]);
    expect(verifyEd25519(malleated, msg, pub)).toBe(false);
    expect(noble(malleated, msg, pub)).toBe(false);
  });

  it('refuses small-order public keys (a forgery for any message under the identity key)', () => {
    const identity = Uint8Array.from([1, ...new Array<number>(31).fill(0)]);
    const forged = Uint8Array.from([1, ...new Array<number>(31).fill(0), ...new Array<number>(32).fill(0)]);
    expect(verifyEd25519(forged, msg, identity)).toBe(false);
    expect(noble(forged, msg, identity)).toBe(false);
  });

  it('refuses a non-canonical public key encoding (y >= p)', () => {
    const p = (1n << 255n) - 19n;
    const nonCanonical = toLe(p + 1n); // y = p + 1 encodes 1 non-canonically
    expect(verifyEd25519(signEd25519(msg, sk), msg, nonCanonical)).toBe(false);
  });

  it('accepts, like the cofactored strict check, an R carrying a small-order component (OpenSSL alone would refuse)', () => {
    const { scalar: a, pointBytes: A } = ed25519.utils.getExtendedPublicKey(sk);
    const r = 123456789n;
    const T = ed25519.Point.fromBytes(Uint8Array.from(Buffer.from('26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', 'hex')));
    expect(T.isSmallOrder()).toBe(true);
    const R = ed25519.Point.BASE.multiply(r).add(T);
    const sig = signWith(r, R, a, A, msg);
    expect(noble(sig, msg, A)).toBe(true);
    expect(verifyEd25519(sig, msg, A)).toBe(true);
    // and a clean signature made the same way verifies on both paths
    const clean = signWith(r, ed25519.Point.BASE.multiply(r), a, A, msg);
    expect(verifyEd25519(clean, msg, A)).toBe(true);
  });

  it('malformed lengths are false, never a throw', () => {
    expect(verifyEd25519(new Uint8Array(63), msg, pub)).toBe(false);
    expect(verifyEd25519(new Uint8Array(64), msg, new Uint8Array(31))).toBe(false);
    expect(() => signEd25519(msg, new Uint8Array(31))).toThrow(RangeError);
  });
});

describe('verifyEd25519Async (thread pool) gives exactly the answers of verifyEd25519', () => {
  const sk = new Uint8Array(32).fill(4);
  const pub = ed25519PublicKey(sk);
  const msg = new TextEncoder().encode('vault');

  it('on valid, corrupted, cross-key, malleated, small-order, non-canonical and malformed inputs', async () => {
    const cases: [Uint8Array, Uint8Array, Uint8Array][] = [];
    for (let i = 0; i < 40; i++) {
      const key = ed25519.utils.randomSecretKey();
      const m = ed25519.utils.randomSecretKey();
      const sig = signEd25519(m, key);
      const pk = ed25519PublicKey(key);
      const bad = Uint8Array.from(sig);
      bad[i % 64] = (bad[i % 64] as number) ^ 1;
      cases.push([sig, m, pk], [bad, m, pk], [sig, m, pub]);
    }
    const sig = signEd25519(msg, sk);
    cases.push([Uint8Array.from([...sig.subarray(0, 32), ...toLe(le(sig.subarray(32)) + L)]), msg, pub]);
    cases.push([Uint8Array.from([1, ...new Array<number>(63).fill(0)]), msg, Uint8Array.from([1, ...new Array<number>(31).fill(0)])]);
    cases.push([sig, msg, toLe((1n << 255n) - 18n)]);
    cases.push([new Uint8Array(63), msg, pub], [new Uint8Array(64), msg, new Uint8Array(31)]);
    // an R with a small-order component: OpenSSL refuses, the strict check accepts; both paths must accept
    const { scalar: a, pointBytes: A } = ed25519.utils.getExtendedPublicKey(sk);
    const T = ed25519.Point.fromBytes(Uint8Array.from(Buffer.from('26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', 'hex')));
    cases.push([signWith(99n, ed25519.Point.BASE.multiply(99n).add(T), a, A, msg), msg, A]);
    const answers = await Promise.all(cases.map(([s, m, k]) => verifyEd25519Async(s, m, k)));
    expect(answers).toEqual(cases.map(([s, m, k]) => verifyEd25519(s, m, k)));
    expect(answers.filter(Boolean).length).toBe(41); // 40 valid + the small-order-R case
  });
});
