/**
 * The published JSON Schemas (ROUTES[].input/output) agree with what the answerer does: every
 * 200 body (after a JSON round trip, so a leaked bigint would fail) conforms to its route's
 * output schema, accepted queries conform to the input schema, and queries the input schema
 * rejects are refused by the answerer too.
 */
import { describe, expect, it } from 'vitest';
import { PAID_PATHS, ROUTES, type PaidPath } from '../src/routes.js';
import { queryObject, sampleAnswerer, schemaErrors } from './answers-fixtures.js';

const a = sampleAnswerer();
const route = (p: PaidPath) => ROUTES.find((r) => r.path === p)!;

const GOOD: [PaidPath, string][] = [
  ['/api/x402/search', 'q=ramen'],
  ['/api/x402/search', 'q=kids family&mode=deep&who=2,2&budget=50&when=60&resident=1&area=orlando'],
  ['/api/x402/search', 'q=xylophonequartz&mode=deep'],
  ['/api/x402/search', 'mode=plan&who=2,1&when=4&budget=3000&q=kids'],
  ['/api/x402/search', 'mode=plan&adults=2&days=2&budget=100'],
  ['/api/x402/search', 'mode=plan&adults=1&days=1&nights=0&parks=tidewell&stay_style=mix'],
  ['/api/x402/places', ''],
  ['/api/x402/places', 'q=coffee&area=orlando&open=1&limit=3&category=cafe'],
  ['/api/x402/deals', 'q=family&max_price=40&resident=1&limit=5'],
  ['/api/x402/deals', 'area=lisbon&category=food'],
  ['/api/x402/stack', 'parks=both&adults=2&kids=2&days=5&nights=4&resident=1&stay_style=mix'],
  ['/api/x402/stack', 'parks=starfall&adults=1&days=9&nights=0'],
  ['/api/v1/geo/places', 'near=28.5383,-81.3792&q=ramen&open=0&radius_km=50&limit=5'],
  ['/api/v1/geo/places', 'near=38.7223,-9.1393'],
  ['/api/v1/geo/events', 'q=music&days=60&area=lisbon&limit=10'],
  ['/api/v1/geo/events', ''],
];

/** Refused by both the published schema and the answerer (the schema can express these). */
const BAD: [PaidPath, string][] = [
  ['/api/x402/search', ''], // q required unless plan
  ['/api/x402/search', 'q=x&mode=fast'],
  ['/api/x402/search', 'q=x&days=3'], // plan-only parameter
  ['/api/x402/search', 'mode=plan&when=3'], // no party
  ['/api/x402/search', 'mode=plan&who=2'], // no length
  ['/api/x402/search', 'q=x&budget=1.234'],
  ['/api/x402/search', 'q=x&who=two'],
  ['/api/x402/places', 'open=true'],
  ['/api/x402/places', 'sort=name'],
  ['/api/x402/deals', 'max_price=-1'],
  ['/api/x402/stack', 'adults=2&days=2'],
  ['/api/x402/stack', 'parks=starfall&adults=2&days=2&stay_style=luxury'],
  ['/api/x402/stack', 'parks=starfall&adults=two&days=2'],
  ['/api/v1/geo/places', ''],
  ['/api/v1/geo/places', 'near=abc'],
  ['/api/v1/geo/events', 'days=1.5'],
];

describe('route schemas agree with the answers', () => {
  it('ROUTES has one entry per paid path, with schemas', () => {
    expect(ROUTES.map((r) => r.path)).toEqual(PAID_PATHS);
    for (const r of ROUTES) {
      expect(r.input.type).toBe('object');
      expect(r.input.additionalProperties).toBe(false);
      expect(r.output.type).toBe('object');
      expect(r.description.length).toBeGreaterThan(20);
    }
  });

  it.each(GOOD)('%s?%s: input conforms, 200 body conforms after a JSON round trip', async (path, query) => {
    expect(schemaErrors(route(path).input, queryObject(query))).toEqual([]);
    const r = await a.answer(path, new URLSearchParams(query));
    expect(r.status).toBe(200);
    const wire = JSON.parse(JSON.stringify(r.body)) as unknown;
    expect(schemaErrors(route(path).output, wire)).toEqual([]);
  });

  it.each(BAD)('%s?%s: rejected by the input schema and refused with 400', async (path, query) => {
    expect(schemaErrors(route(path).input, queryObject(query)).length).toBeGreaterThan(0);
    const r = await a.answer(path, new URLSearchParams(query));
    expect(r.status).toBe(400);
  });

  it('every published example request conforms to its input schema and is answered 200', async () => {
    let n = 0;
    for (const r of ROUTES) {
      const examples = r.input.examples as Record<string, string>[];
      expect(examples.length, r.path).toBeGreaterThan(0);
      for (const e of examples) {
        expect(schemaErrors(r.input, e), `${r.path} ${JSON.stringify(e)}`).toEqual([]);
        const res = await a.answer(r.path as PaidPath, new URLSearchParams(e));
        expect(res.status, `${r.path} ${JSON.stringify(e)}: ${JSON.stringify(res.body).slice(0, 200)}`).toBe(200);
        expect(schemaErrors(r.output, JSON.parse(JSON.stringify(res.body)))).toEqual([]);
        n += 1;
      }
    }
    expect(n).toBeGreaterThanOrEqual(ROUTES.length);
  });

  it('the checker is not vacuous: a body with a number total or a missing source fails', async () => {
    const r = await a.answer('/api/x402/stack', new URLSearchParams('parks=starfall&adults=1&days=1'));
    const body = JSON.parse(JSON.stringify(r.body)) as { plan: { total: unknown }; source?: unknown };
    body.plan.total = 119;
    expect(schemaErrors(route('/api/x402/stack').output, body).join()).toMatch(/total/);
    delete body.source;
    expect(schemaErrors(route('/api/x402/stack').output, body).join()).toMatch(/source/);
    expect(() => schemaErrors({ format: 'date' }, 'x')).toThrow(/not implemented/);
  });
});
