/**
 * What the governance integration tests share: a 2-of-3 admin quorum, an HTTP call with the rig's
 * operator session, and a change set proposed and approved by two admins (it applies: no delay).
 */
import { changeSetDigest, signChangeApproval, type AdminPolicy, type ChangeSet } from '@vault/sdk';
import { expect } from 'vitest';
import { approver } from '../signer/helpers.js';
import type { Rig } from './rig.js';

/** Three admins (keys from seeds `seed`, `seed + 1`, `seed + 2`), any two of which apply a change set. */
export function adminQuorum(seed: number): { admins: ReturnType<typeof approver>[]; governance: AdminPolicy } {
  const admins = [approver('admin1', seed), approver('admin2', seed + 1), approver('admin3', seed + 2)];
  return { admins, governance: { admins: admins.map((a) => ({ id: a.id, public_key: a.publicKeyHex, weight: 1 })), threshold: 2, delay_seconds: 0, version: 0 } };
}

/** A JSON call to the rig's control plane, with its operator session unless `token` says otherwise (null: none). */
export async function call(r: Rig, method: string, path: string, body?: unknown, token: string | null | undefined = r.cp.getToken()): Promise<{ status: number; body: any }> {
  const res = await fetch(`${r.cp.baseUrl}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** Proposes `ops` against the current version and has the first two admins approve: the answer of the approval that applied it. */
export async function applyChange(r: Rig, admins: readonly ReturnType<typeof approver>[], ops: unknown[]): Promise<any> {
  const version = (await call(r, 'GET', '/changes')).body.version as number;
  const proposed = await call(r, 'POST', '/changes', { base_version: version, ops });
  expect(proposed.status, JSON.stringify(proposed.body)).toBe(201);
  const change = proposed.body.change as ChangeSet;
  let out: any;
  for (const a of admins.slice(0, 2)) {
    out = await call(r, 'POST', `/changes/${proposed.body.id}/approve`, signChangeApproval({ admin_id: a.id, change: changeSetDigest(change), verdict: 'approve', at: r.w.clock.now - 30 }, a.secret));
    expect(out.status, JSON.stringify(out.body)).toBe(200);
  }
  expect(out.body).toMatchObject({ status: 'applied' });
  return out.body;
}
