/**
 * @module redact
 * Endpoint URLs may carry secrets: an API key in the query string (`?api-key=…`), in userinfo
 * (`https://user:key@host`), or in the path (`/v2/<key>`, written in the config as `${ENV_VAR}`).
 * The report's `endpoint` field and every log line use the public form; the secret form is only ever
 * handed to `fetch`.
 */
import { SupplyReportError } from './errors.js';

const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export interface ResolvedEndpoint {
  /** What fetch is given (placeholders expanded; may hold secrets). Never log this. */
  url: string;
  /** What the report shows and the logs print: no userinfo, no query, no fragment, no expanded secret. */
  publicUrl: string;
  /** Strings to scrub from any text that leaves the process (log lines, error messages). */
  secrets: string[];
}

/**
 * The public form of a URL: scheme, host, port and path only. Returns null when the path or host
 * holds a `${…}` placeholder, which only the config author can replace with something public.
 */
export function stripUrl(raw: string): string | null {
  const hostAndPath = (raw.split(/[?#]/)[0] as string).replace(/^([a-z]+:\/\/)[^/@]*@/i, '$1');
  if (hostAndPath.includes('${')) return null;
  const u = new URL(hostAndPath);
  return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname.replace(/\/$/, '')}`;
}

/**
 * Expands `${VAR}` from `env`, and works out the public URL and the secret strings.
 * `field` names the config path for errors.
 */
export function resolveEndpoint(template: string, publicUrl: string | undefined, env: Record<string, string | undefined>, field: string): ResolvedEndpoint {
  const secrets: string[] = [];
  const expanded = template.replace(PLACEHOLDER, (_, name: string) => {
    const value = env[name];
    if (value === undefined || value === '') throw new SupplyReportError('bad_config', `${field}.url: environment variable ${name} is not set`);
    secrets.push(value);
    return value;
  });
  let u: URL;
  try {
    u = new URL(expanded);
  } catch {
    throw new SupplyReportError('bad_config', `${field}.url: not a valid URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new SupplyReportError('bad_config', `${field}.url: only http and https endpoints are supported`);
  if (u.username) secrets.push(decodeURIComponent(u.username));
  if (u.password) secrets.push(decodeURIComponent(u.password));
  if (u.search.length > 1) {
    secrets.push(u.search.slice(1));
    for (const [, v] of u.searchParams) if (v.length >= 4) secrets.push(v);
  }
  let pub: string;
  if (publicUrl !== undefined) {
    let p: URL;
    try {
      p = new URL(publicUrl);
    } catch {
      throw new SupplyReportError('bad_config', `${field}.publicUrl: not a valid URL`);
    }
    if (p.username || p.password || p.search || p.hash || publicUrl.includes('${')) {
      throw new SupplyReportError('bad_config', `${field}.publicUrl: must not carry userinfo, a query string, a fragment or a placeholder`);
    }
    pub = publicUrl.replace(/\/$/, '');
  } else {
    const stripped = stripUrl(template);
    if (stripped === null) {
      throw new SupplyReportError('bad_config', `${field}.publicUrl: required because url carries a \${…} secret in its host or path`);
    }
    pub = stripped;
  }
  for (const s of secrets) {
    if (pub.includes(s)) throw new SupplyReportError('bad_config', `${field}.publicUrl: would reveal a secret from url`);
  }
  return { url: expanded, publicUrl: pub, secrets: secrets.filter((s) => s.length > 0).sort((a, b) => b.length - a.length) };
}

/** Scrubs every known secret and any URL's userinfo or query string from a text. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join('***');
  // Belt and braces for URLs the caller did not register (e.g. one echoed in a server's error).
  out = out.replace(/(https?:\/\/)[^/\s@]+@/gi, '$1***@').replace(/(https?:\/\/[^\s?#"']+)\?[^\s#"']*/gi, '$1?***');
  return out;
}
