import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { listen } from './listen.js';

describe('listen', () => {
  it('binds 127.0.0.1 on a free port, serves, and closes even with keep-alive sockets', async () => {
    const app = new Hono();
    app.get('/', (c) => c.text('hi'));
    const l = await listen(app);
    expect(l.host).toBe('127.0.0.1');
    expect(l.port).toBeGreaterThan(0);
    expect(l.url).toBe(`http://127.0.0.1:${l.port}`);
    expect(await (await fetch(l.url)).text()).toBe('hi');
    await l.close();
    await expect(fetch(l.url)).rejects.toThrow();
  });
  it('brackets an IPv6 host in the URL, and rejects a busy port', async () => {
    const app = new Hono();
    const a = await listen(app, { host: '127.0.0.1' });
    await expect(listen(app, { port: a.port })).rejects.toThrow();
    await a.close();
    const v6 = await listen(app, { host: '::1' }).catch(() => null);
    if (v6) {
      expect(v6.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
      await v6.close();
    }
  });
  it('close with a grace answers a request under way, ends idle keep-alive sockets, and cuts what outlives the grace', async () => {
    const app = new Hono();
    app.get('/slow', async (c) => {
      await new Promise((r) => setTimeout(r, Number(c.req.query('ms'))));
      return c.text('answered');
    });
    const l = await listen(app);
    await (await fetch(`${l.url}/slow?ms=0`)).text(); // leaves an idle keep-alive socket
    const underWay = fetch(`${l.url}/slow?ms=200`).then((r) => r.text());
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    await l.close(5_000);
    expect(await underWay).toBe('answered');
    // Closed once the answer went out, not when the grace ran out.
    expect(Date.now() - t0).toBeLessThan(5_000);
    await expect(fetch(l.url)).rejects.toThrow();

    const m = await listen(app);
    const stuck = fetch(`${m.url}/slow?ms=60000`).then((r) => r.text());
    await new Promise((r) => setTimeout(r, 50));
    await m.close(100);
    await expect(stuck).rejects.toThrow();
  });
});
