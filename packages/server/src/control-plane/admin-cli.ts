/**
 * @module control-plane/admin-cli
 * What an admin runs to take part in change sets without writing code:
 *
 *   vault-control-plane admin keygen --id ID --out FILE
 *   vault-control-plane change approve ID --key FILE [--reject] [--url http://127.0.0.1:7331]
 *
 * keygen writes an ed25519 admin key (0600, refusing to overwrite) and prints the admin entry
 * (`{id, public_key, weight}`) to put in the admin policy. `change approve` reads the change set
 * from the control plane, shows what it signs, signs the verdict over the change set's digest as
 * it recomputes it (never the digest the server states) and posts it. The session comes from
 * VAULT_SESSION_TOKEN, else the operator passphrase (VAULT_OPERATOR_PASSPHRASE). Secrets are
 * never printed.
 */
import { changeSetDigest, changeSetId, createControlPlaneClient, generateEd25519KeyPair, signChangeApproval, toHex, ChangeSetSchema, parseWith } from '@vault/sdk';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { readSecretFile, writeFileAtomic } from '../http/files.js';

const AdminKeyFileSchema = z.strictObject({
  format: z.literal('vault-admin-key'),
  id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/),
  public_key: z.string().regex(/^[0-9a-f]{64}$/),
  secret_key: z.string().regex(/^[0-9a-f]{64}$/),
});

export const ADMIN_USAGE = `  vault-control-plane admin keygen --id ID --out FILE
  vault-control-plane change approve ID --key FILE [--reject] [--url http://127.0.0.1:7331]
    (session: VAULT_SESSION_TOKEN, else VAULT_OPERATOR_PASSPHRASE)`;

export class AdminUsageError extends Error {}

function flags(rest: readonly string[], bool: readonly string[] = []): { positional: string[]; values: Map<string, string> } {
  const values = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i] as string;
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const name = a.slice(2);
    if (bool.includes(name)) {
      values.set(name, 'true');
      continue;
    }
    const v = rest[i + 1];
    if (v === undefined || v.startsWith('--')) throw new AdminUsageError(`${a} needs a value`);
    values.set(name, v);
    i++;
  }
  return { positional, values };
}

/**
 * Runs `admin …` or `change …`; returns the exit code and writes its answer (JSON) with `out`.
 *
 * @example
 * await adminMain(['admin', 'keygen', '--id', 'alice', '--out', 'alice.key'], (s) => process.stdout.write(s))
 */
export async function adminMain(argv: readonly string[], out: (text: string) => void, env: NodeJS.ProcessEnv = process.env, now: () => number = () => Math.floor(Date.now() / 1000)): Promise<number> {
  const [group, verb, ...rest] = argv;
  if (group === 'admin' && verb === 'keygen') {
    const { values } = flags(rest);
    const id = values.get('id');
    const file = values.get('out');
    if (id === undefined || file === undefined) throw new AdminUsageError('admin keygen needs --id ID and --out FILE');
    if (!/^[A-Za-z0-9._:-]{1,128}$/.test(id)) throw new AdminUsageError('--id: 1..128 of A-Z a-z 0-9 . _ : -');
    const path = resolve(file);
    if (existsSync(path)) throw new AdminUsageError(`${path} exists; an admin key is never overwritten`);
    const pair = generateEd25519KeyPair();
    writeFileAtomic(path, `${JSON.stringify({ format: 'vault-admin-key', id, public_key: pair.publicKeyHex, secret_key: toHex(pair.secretKey) })}\n`, 0o600);
    pair.secretKey.fill(0);
    out(`${JSON.stringify({ id, public_key: pair.publicKeyHex, weight: 1, file: path })}\n`);
    return 0;
  }
  if (group === 'change' && verb === 'approve') {
    const { positional, values } = flags(rest, ['reject']);
    const id = positional[0];
    const keyFile = values.get('key');
    if (id === undefined || keyFile === undefined) throw new AdminUsageError('change approve needs the change id and --key FILE');
    const key = parseWith(AdminKeyFileSchema, JSON.parse(readSecretFile(resolve(keyFile))), 'admin key');
    const client = createControlPlaneClient({ baseUrl: values.get('url') ?? 'http://127.0.0.1:7331' });
    const token = env['VAULT_SESSION_TOKEN'];
    if (token) client.setToken(token);
    else if (env['VAULT_OPERATOR_PASSPHRASE']) await client.unlock(env['VAULT_OPERATOR_PASSPHRASE']);
    else throw new AdminUsageError('no session: set VAULT_SESSION_TOKEN or VAULT_OPERATOR_PASSPHRASE');
    const headers = { authorization: `Bearer ${client.getToken()}`, 'content-type': 'application/json' };
    const res = await fetch(`${client.baseUrl}/changes/${encodeURIComponent(id)}`, { headers });
    if (!res.ok) throw new Error(`GET /changes/${id}: HTTP ${res.status}`);
    const shown = (await res.json()) as { change: unknown };
    // The digest this admin signs is the one of the change set as read, recomputed here.
    const change = parseWith(ChangeSetSchema, shown.change, 'change');
    const digest = changeSetDigest(change);
    // The id is the digest's prefix: a control plane showing another change set under the id the
    // admin reviewed would otherwise get the admin's signature on it.
    if (changeSetId(digest) !== id) throw new Error(`the control plane showed change set ${changeSetId(digest)}, which is not change ${id}: nothing signed`);
    const verdict = values.get('reject') === 'true' ? 'reject' : 'approve';
    const approval = signChangeApproval({ admin_id: key.id, change: digest, verdict, at: now() }, key.secret_key);
    const posted = await fetch(`${client.baseUrl}/changes/${encodeURIComponent(id)}/approve`, { method: 'POST', headers, body: JSON.stringify(approval) });
    const body = (await posted.json().catch(() => null)) as Record<string, unknown> | null;
    out(`${JSON.stringify({ id, digest, verdict, ops: change.ops.map((o) => o.op), base_version: change.base_version, http: posted.status, result: body })}\n`);
    return posted.ok ? 0 : 1;
  }
  throw new AdminUsageError(`unknown command ${[group, verb].filter(Boolean).join(' ')}`);
}

/** For tests: the admin key file a keygen wrote, parsed (never printed by the CLI). */
export function readAdminKey(path: string): z.infer<typeof AdminKeyFileSchema> {
  return parseWith(AdminKeyFileSchema, JSON.parse(readFileSync(path, 'utf8')), 'admin key');
}
