import { ValidationError } from '@vault/sdk';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadTrust, parseTrust, trustFileJsonSchema } from './trust.js';

const here = dirname(fileURLToPath(import.meta.url));

function readmeExample(): unknown {
  const md = readFileSync(join(here, '../../README-signer.md'), 'utf8');
  const section = md.slice(md.indexOf('### Trust file example'));
  const block = /```json\n([\s\S]*?)```/.exec(section);
  return JSON.parse(block![1]!);
}

describe('trust file', () => {
  it('the README example parses', () => {
    const trust = parseTrust(readmeExample());
    expect(trust.wallet('treasury')?.policyDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(trust.wallet('nope')).toBeUndefined();
    expect(trust.approvers.get('alice')?.weight).toBe(1);
    expect(trust.keyScope('d04ab232742bb4ab3a1368bd4615e4e6d0224ab71a016baf8520a332c9778737')).toEqual({ wallets: ['treasury'], chains: ['xrpl:testnet'] });
    expect(trust.registry?.reserved).toContain('USDC');
  });

  it('the committed JSON Schema is the one generated from the zod schema', () => {
    const committed = JSON.parse(readFileSync(join(here, 'trust-file.schema.json'), 'utf8'));
    expect(committed).toEqual(trustFileJsonSchema());
  });

  it('names the failing field: duplicate wallets and approvers, bad digests, unknown fields', () => {
    const base = readmeExample() as Record<string, unknown> & { wallets: unknown[]; approvers: unknown[] };
    const fails = (doc: unknown, path: RegExp) => {
      try {
        parseTrust(doc);
      } catch (e) {
        expect(e).toBeInstanceOf(ValidationError);
        expect((e as ValidationError).message).toMatch(path);
        return;
      }
      throw new Error('expected a ValidationError');
    };
    fails({ ...base, wallets: [base.wallets[0], base.wallets[0]] }, /trust\.wallets\.1\.descriptor\.wallet/);
    fails({ ...base, approvers: [base.approvers[0], base.approvers[0]] }, /trust\.approvers\.1\.id/);
    fails({ ...base, wallets: [{ ...(base.wallets[0] as object), policy_digest: 'xyz' }] }, /policy_digest/);
    fails({ ...base, extra: 1 }, /trust/);
    fails({ ...base, format: 'other' }, /trust\.format/);
  });

  it('loadTrust reads a file and refuses one that is not JSON', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trust-'));
    try {
      writeFileSync(join(dir, 'ok.json'), JSON.stringify(readmeExample()));
      expect(loadTrust(join(dir, 'ok.json')).file.version).toBe(1);
      writeFileSync(join(dir, 'bad.json'), '{');
      expect(() => loadTrust(join(dir, 'bad.json'))).toThrow(/not readable JSON/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
