/**
 * @module discovery
 * The two discovery documents of the paid search API, both generated from the route table
 * ({@link ROUTES}) so a price or parameter is never stated twice:
 * - {@link buildDescriptor}: the /.well-known/x402 JSON document, with exactly the fields of
 *   interface.md "Paid agent search API" (service, operator, protocol, pay_with, enabled, status,
 *   endpoints, flow, discovery, docs).
 * - {@link buildLlmsTxt}: /llms.txt, a plain-text guide for agents (routes, prices, parameters,
 *   schemas, the payment flow, and the status, saying plainly when payment is not enabled).
 */
import { ROUTES, type RouteSpec } from './routes.js';

export interface DiscoveryOptions {
  /** Public base URL of the service, http or https, e.g. "https://search.example". */
  baseUrl: string;
  /** Who runs the service. */
  operator: string;
  /** Service name; default {@link DEFAULT_SERVICE}. */
  service?: string;
  /** What payment is taken in, e.g. "USDC on Base Sepolia (test network)". */
  payWith: string;
  /** Whether the paid routes take payment and answer. */
  enabled: boolean;
  /** Status word, e.g. "LIVE" or "ABSENT". */
  status: string;
}

export const DEFAULT_SERVICE = 'vault agent search';
export const PROTOCOL = 'x402 v2';
export const WELL_KNOWN_PATH = '/.well-known/x402';
export const LLMS_TXT_PATH = '/llms.txt';

/** The payment flow in one line (interface.md "Payment flow"). */
export const FLOW =
  'GET without payment -> HTTP 402 with PAYMENT-REQUIRED (base64 JSON terms); sign an EIP-3009 transfer ' +
  'authorisation and retry with PAYMENT-SIGNATURE -> the answer with a PAYMENT-RESPONSE receipt. ' +
  'You are charged only when an answer (HTTP 200) is returned.';

function normalise(o: DiscoveryOptions): { base: string; service: string } {
  let url: URL;
  try {
    url = new URL(o.baseUrl);
  } catch {
    throw new TypeError(`baseUrl must be an absolute http(s) URL (got "${o.baseUrl}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`baseUrl must be an absolute http(s) URL (got "${o.baseUrl}")`);
  }
  if (url.search || url.hash) throw new TypeError(`baseUrl must not carry a query or fragment (got "${o.baseUrl}")`);
  if (typeof o.operator !== 'string' || o.operator.trim() === '') throw new TypeError('operator must be a non-empty string');
  if (typeof o.payWith !== 'string' || o.payWith.trim() === '') throw new TypeError('payWith must be a non-empty string');
  if (typeof o.enabled !== 'boolean') throw new TypeError('enabled must be a boolean');
  if (typeof o.status !== 'string' || o.status.trim() === '') throw new TypeError('status must be a non-empty string');
  return { base: url.href.replace(/\/+$/, ''), service: o.service ?? DEFAULT_SERVICE };
}

function priceOf(r: RouteSpec): string | Record<string, string> {
  return typeof r.price === 'string' ? r.price : { ...r.price };
}

/**
 * The /.well-known/x402 descriptor.
 *
 * @example
 * buildDescriptor({ baseUrl: 'http://127.0.0.1:8402', operator: 'Example Ops', payWith: 'USDC (test network)', enabled: false, status: 'ABSENT' })
 * // { service, operator, protocol: 'x402 v2', pay_with, enabled: false, status: 'ABSENT', endpoints: { 'GET /api/x402/places': '0.002', ... }, flow, discovery, docs }
 */
export function buildDescriptor(o: DiscoveryOptions, routes: readonly RouteSpec[] = ROUTES): Record<string, unknown> {
  const { base, service } = normalise(o);
  const endpoints: Record<string, string | Record<string, string>> = {};
  for (const r of routes) endpoints[`GET ${r.path}`] = priceOf(r);
  return {
    service,
    operator: o.operator,
    protocol: PROTOCOL,
    pay_with: o.payWith,
    enabled: o.enabled,
    status: o.status,
    endpoints,
    flow: FLOW,
    discovery: `${base}${WELL_KNOWN_PATH}`,
    docs: `${base}${LLMS_TXT_PATH}`,
  };
}

function priceText(r: RouteSpec): string {
  if (typeof r.price === 'string') return `${r.price} per call`;
  return `${Object.entries(r.price)
    .map(([mode, p]) => `${p} (mode=${mode})`)
    .join(', ')} per call`;
}

function paramLines(r: RouteSpec): string[] {
  const props = (r.input.properties ?? {}) as Record<string, { description?: string; enum?: string[] }>;
  const required = new Set((r.input.required ?? []) as string[]);
  const names = Object.keys(props);
  if (names.length === 0) return ['- (no parameters)'];
  return names.map((n) => {
    const p = props[n] ?? {};
    const desc = p.description ?? (p.enum ? `one of ${p.enum.join(', ')}` : '');
    return `- ${n}${required.has(n) ? ' (required)' : ''}: ${desc}`;
  });
}

/**
 * The /llms.txt guide. Plain text (Markdown-flavoured), generated from the same table as the
 * descriptor.
 *
 * @example
 * const text = buildLlmsTxt({ baseUrl, operator, payWith, enabled: false, status: 'ABSENT' });
 */
export function buildLlmsTxt(o: DiscoveryOptions, routes: readonly RouteSpec[] = ROUTES): string {
  const { base, service } = normalise(o);
  const out: string[] = [];
  out.push(`# ${service}`, '');
  out.push(
    `> A paid search API for AI agents, operated by ${o.operator}: places, deals, events and costed resort trips. ` +
      `Every endpoint is a GET, paid per call over ${PROTOCOL} with ${o.payWith}.`,
    '',
  );
  out.push('## Status', '');
  if (o.enabled) {
    out.push(`Payment is enabled (status: ${o.status}). The paid endpoints below answer when paid.`);
  } else {
    out.push(
      `Payment is NOT enabled (status: ${o.status}). The paid endpoints below are not live: calls to them are refused and ` +
        'nothing is charged. This guide and the descriptor still describe what the service will offer.',
    );
  }
  out.push('');
  out.push('## Payment flow', '');
  out.push(
    '1. Call the endpoint without payment. The reply is HTTP 402 with header PAYMENT-REQUIRED: base64-encoded JSON with the payment terms.',
    '2. Sign an EIP-3009 stablecoin transfer authorisation for the stated price and retry the same request with header PAYMENT-SIGNATURE.',
    '3. You are charged only if an answer is returned (HTTP 200). The receipt comes back in header PAYMENT-RESPONSE.',
    '',
    'A refused request (HTTP 400, e.g. a bad parameter) is not charged. Its body is {"error": {"code", "message", "field"}}, where field names the offending query parameter. Unknown or repeated query parameters are refused, not ignored.',
    '',
  );
  out.push('## Data', '');
  out.push(
    'Every answer carries a "source" object. source.kind "sample" means the answer was built from the embedded, fictional sample data set (fictional places, deals, events and resort operators): do not rely on it for real plans. Amounts are decimal strings; times are integer Unix seconds (with ISO 8601 copies).',
    '',
  );
  out.push('## Endpoints', '');
  for (const r of routes) {
    out.push(`### GET ${r.path}`, '');
    out.push(`Price: ${priceText(r)}.`, '');
    out.push(r.description, '');
    out.push('Parameters:', ...paramLines(r), '');
    const examples = Array.isArray(r.input.examples) ? (r.input.examples as Record<string, string>[]) : [];
    if (examples.length === 0) out.push(`Example: GET ${base}${r.path}`, '');
    for (const e of examples) {
      const qs = new URLSearchParams(e).toString();
      out.push(`Example: GET ${base}${r.path}${qs ? `?${qs}` : ''}`);
    }
    if (examples.length > 0) out.push('');
    out.push('Input schema (query parameters, JSON Schema):', '```json', JSON.stringify(r.input), '```', '');
    out.push('Output schema (HTTP 200 body, JSON Schema):', '```json', JSON.stringify(r.output), '```', '');
  }
  out.push('## Discovery', '');
  out.push(`- Descriptor: ${base}${WELL_KNOWN_PATH}`, `- This guide: ${base}${LLMS_TXT_PATH}`, '');
  return out.join('\n');
}
