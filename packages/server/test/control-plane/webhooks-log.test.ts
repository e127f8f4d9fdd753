/**
 * Webhooks from the control plane's own event log, end to end: an intent created, approved and
 * executed to confirmed reaches a receiver that fails twice first as every event of the log, in
 * log order, each delivery signed as the Standard Webhooks convention says (checked with the
 * `standardwebhooks` package) and named by its event id.
 */
import type { VaultEvent } from '@vault/sdk';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, expect, it, vi } from 'vitest';
import { PASSPHRASE, raw, setup, type Harness } from './helpers.js';

vi.setConfig({ testTimeout: 60_000 });

let h: Harness | undefined;
const closers: (() => void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) c();
  await h?.close();
  h = undefined;
});

it('every event of a real lifecycle reaches a receiver that fails twice first, in order and signed', async () => {
  h = await setup({
    rules: [{ rule: 'approval_threshold', above: '10', required_weight: 1, approvers: [{ id: 'alice', weight: 1 }] }],
    state: { webhooks: { endpoints: [], allow_private: true, allow_networks: [], retry_horizon_seconds: 86_400, attempt_timeout_seconds: 5, max_concurrency: 4 } },
    controlPlane: { webhookRetry: { baseSeconds: 1, capSeconds: 1 } },
  });
  // standardwebhooks checks webhook-timestamp against the system clock.
  h.clock.now = Math.floor(Date.now() / 1000);
  await h.client.unlock(PASSPHRASE); // the clock moved on: a fresh session
  const hits: { headers: IncomingHttpHeaders; body: string }[] = [];
  let failures = 2;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (failures > 0) {
        failures -= 1;
        res.writeHead(503).end();
        return;
      }
      hits.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const created = await raw(h, 'POST', '/webhooks', { body: JSON.stringify({ url }) });
  expect(created.status, created.text).toBe(200);
  const secret = created.body.secret as string;

  const intent = await h.client.createIntent({ wallet: 'ops', destination: h.dest(), amount: '50' });
  await h.client.approveSigned(intent.intentId, h.approve(intent.intentId, 'alice'));
  expect(await h.client.execute(intent.intentId)).toMatchObject({ status: 'confirmed' });

  const log: VaultEvent[] = (await raw(h, 'GET', '/events?limit=1000')).body.events;
  expect(log.map((e) => e.type)).toEqual(expect.arrayContaining(['intent.created', 'approval.recorded', 'intent.signing', 'intent.confirmed']));
  // The endpoint receives what the log holds from its creation on (its own webhook.created at most before).
  const expected = log.filter((e) => e.type !== 'webhook.created');
  const deadline = Date.now() + 30_000;
  while (new Set(hits.map((x) => x.headers['webhook-id']).filter((id) => expected.some((e) => e.id === id))).size < expected.length) {
    if (Date.now() > deadline) throw new Error(`delivered ${hits.length} of ${log.length}`);
    h.clock.now += 1;
    h.running.cp.webhooks.kick();
    await new Promise((r) => setTimeout(r, 20));
  }
  const wh = new Webhook(secret);
  const delivered = hits.map((x) => {
    const headers = { 'webhook-id': String(x.headers['webhook-id']), 'webhook-timestamp': String(x.headers['webhook-timestamp']), 'webhook-signature': String(x.headers['webhook-signature']) };
    const event = wh.verify(x.body, headers) as VaultEvent;
    expect(headers['webhook-id']).toBe(event.id);
    return event;
  });
  // At least once, in log order: with the repeats of the failed attempts dropped, exactly the log.
  const firsts = delivered.filter((e, i) => delivered.findIndex((d) => d.id === e.id) === i && e.type !== 'webhook.created');
  expect(firsts).toEqual(expected);

  // Adding and removing an endpoint are changes like any other: each has its event.
  expect((await raw(h, 'DELETE', `/webhooks/${created.body.id}`)).status).toBe(200);
  const config = (await raw(h, 'GET', '/events?types=webhook.created,webhook.deleted')).body.events as VaultEvent[];
  expect(config.map((e) => [e.type, e.subject])).toEqual([
    ['webhook.created', { webhook: created.body.id }],
    ['webhook.deleted', { webhook: created.body.id }],
  ]);
});
