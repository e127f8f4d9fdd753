/**
 * /.well-known/x402 descriptor and /llms.txt, both generated from ROUTES.
 */
import { describe, expect, it } from 'vitest';
import { buildDescriptor, buildLlmsTxt, DEFAULT_SERVICE, FLOW, type DiscoveryOptions } from '../src/discovery.js';
import { PRICES, ROUTES, type RouteSpec } from '../src/routes.js';

const LIVE: DiscoveryOptions = {
  baseUrl: 'https://search.example/',
  operator: 'Example Ops',
  service: 'Example agent search',
  payWith: 'USDC on Base Sepolia (test network)',
  enabled: true,
  status: 'LIVE',
};
const ABSENT: DiscoveryOptions = { baseUrl: 'http://127.0.0.1:8402', operator: 'Example Ops', payWith: 'USDC on a test network', enabled: false, status: 'ABSENT' };

describe('descriptor', () => {
  it('has exactly the spec fields, with the exact prices per request line', () => {
    const d = buildDescriptor(LIVE);
    expect(Object.keys(d).sort()).toEqual(['discovery', 'docs', 'enabled', 'endpoints', 'flow', 'operator', 'pay_with', 'protocol', 'service', 'status']);
    expect(d).toEqual({
      service: 'Example agent search',
      operator: 'Example Ops',
      protocol: 'x402 v2',
      pay_with: 'USDC on Base Sepolia (test network)',
      enabled: true,
      status: 'LIVE',
      endpoints: {
        'GET /api/x402/search': { quick: '0.01', deep: '0.05', plan: '0.05' },
        'GET /api/x402/places': '0.002',
        'GET /api/x402/deals': '0.002',
        'GET /api/x402/stack': '0.01',
        'GET /api/v1/geo/places': '0.005',
        'GET /api/v1/geo/events': '0.005',
      },
      flow: FLOW,
      discovery: 'https://search.example/.well-known/x402',
      docs: 'https://search.example/llms.txt',
    });
    expect(FLOW).toMatch(/402/);
    expect(FLOW).toMatch(/PAYMENT-SIGNATURE/);
    expect(FLOW).toMatch(/PAYMENT-RESPONSE/);
    expect(FLOW).toMatch(/charged only/);
  });

  it('published state: enabled false, status ABSENT, default service name', () => {
    const d = buildDescriptor(ABSENT);
    expect(d.enabled).toBe(false);
    expect(d.status).toBe('ABSENT');
    expect(d.service).toBe(DEFAULT_SERVICE);
    expect(d.discovery).toBe('http://127.0.0.1:8402/.well-known/x402');
    // Prices are the same whether enabled or not.
    expect(d.endpoints).toEqual(buildDescriptor(LIVE).endpoints);
  });

  it('is derived from the route table: a copy with one more route shows it', () => {
    const extra: RouteSpec = { path: '/api/x402/extra', price: '0.123', description: 'An extra route for this test only.', input: { type: 'object', properties: {} }, output: { type: 'object' } };
    const d = buildDescriptor(LIVE, [...ROUTES, extra]);
    expect((d.endpoints as Record<string, unknown>)['GET /api/x402/extra']).toBe('0.123');
    const changed = ROUTES.map((r) => (r.path === '/api/x402/deals' ? { ...r, price: '0.999' } : r));
    expect((buildDescriptor(LIVE, changed).endpoints as Record<string, unknown>)['GET /api/x402/deals']).toBe('0.999');
    // The descriptor's price object is a copy: mutating it cannot change PRICES.
    const e = buildDescriptor(LIVE).endpoints as Record<string, Record<string, string>>;
    e['GET /api/x402/search']!.quick = '9';
    expect(PRICES['/api/x402/search'].quick).toBe('0.01');
  });

  it('refuses bad options, naming the option', () => {
    expect(() => buildDescriptor({ ...LIVE, baseUrl: 'search.example' })).toThrow(/baseUrl/);
    expect(() => buildDescriptor({ ...LIVE, baseUrl: 'ftp://search.example' })).toThrow(/baseUrl/);
    expect(() => buildDescriptor({ ...LIVE, baseUrl: 'https://search.example/?x=1' })).toThrow(/baseUrl/);
    expect(() => buildDescriptor({ ...LIVE, operator: ' ' })).toThrow(/operator/);
    expect(() => buildDescriptor({ ...LIVE, payWith: '' })).toThrow(/payWith/);
    expect(() => buildDescriptor({ ...LIVE, status: '' })).toThrow(/status/);
    expect(() => buildDescriptor({ ...LIVE, enabled: 'yes' as unknown as boolean })).toThrow(/enabled/);
  });

  it('keeps a base path prefix', () => {
    const d = buildDescriptor({ ...LIVE, baseUrl: 'https://example.org/agents/' });
    expect(d.docs).toBe('https://example.org/agents/llms.txt');
  });
});

describe('llms.txt', () => {
  it('lists every route with its price, parameters and both schemas', () => {
    const t = buildLlmsTxt(LIVE);
    expect(t.startsWith('# Example agent search\n')).toBe(true);
    for (const r of ROUTES) {
      const section = t.slice(t.indexOf(`### GET ${r.path}\n`));
      expect(section.length, r.path).toBeLessThan(t.length);
      const body = section.slice(0, section.indexOf('\n### ', 5) > 0 ? section.indexOf('\n### ', 5) : undefined);
      if (typeof r.price === 'string') expect(body).toContain(`Price: ${r.price} per call.`);
      else for (const [m, p] of Object.entries(r.price)) expect(body).toContain(`${p} (mode=${m})`);
      expect(body).toContain(r.description);
      expect(body).toContain(JSON.stringify(r.input));
      expect(body).toContain(JSON.stringify(r.output));
      for (const name of Object.keys(r.input.properties as object)) expect(body).toContain(`\n- ${name}`);
    }
    expect(t).toContain('- near (required):');
    expect(t).toContain('Example: GET https://search.example/api/x402/stack?parks=both&adults=2&kids=2&days=5&nights=4&stay_style=mix');
    expect(t).toContain('PAYMENT-SIGNATURE');
    expect(t).toContain('charged only if an answer is returned');
    expect(t).toContain('Payment is enabled (status: LIVE)');
    expect(t).toContain('https://search.example/.well-known/x402');
    expect(t).toMatch(/fictional/);
  });

  it('says plainly when payment is not enabled', () => {
    const t = buildLlmsTxt(ABSENT);
    expect(t).toContain('Payment is NOT enabled (status: ABSENT)');
    expect(t).toContain('not live');
    expect(t).not.toContain('Payment is enabled');
  });

  it('is derived from the route table: a copy with one more route shows it', () => {
    const extra: RouteSpec = {
      path: '/api/x402/extra',
      price: { quick: '0.7', deep: '0.8', plan: '0.9' },
      description: 'An extra route for this test only.',
      input: { type: 'object', properties: { zzz: { type: 'string', description: 'the zzz parameter' } }, required: ['zzz'] },
      output: { type: 'object' },
    };
    const t = buildLlmsTxt(LIVE, [...ROUTES, extra]);
    expect(t).toContain('### GET /api/x402/extra');
    expect(t).toContain('0.7 (mode=quick), 0.8 (mode=deep), 0.9 (mode=plan) per call');
    expect(t).toContain('- zzz (required): the zzz parameter');
    expect(buildLlmsTxt(LIVE)).not.toContain('/api/x402/extra');
  });
});
