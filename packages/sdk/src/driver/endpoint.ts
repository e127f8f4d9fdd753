/**
 * @module driver/endpoint
 * The one check every plugin applies to an endpoint URL an operator configures (a ledger node, a
 * faucet, a relayer): it must parse, be http or https, and carry no credentials. URLs end up in
 * error messages and logs, so a `user:password@` in one would leak a secret; a secret belongs in
 * an environment variable the plugin reads by name.
 */

/**
 * Why `value` is not a usable endpoint URL, or null when it is.
 *
 * @example
 * endpointUrlProblem('https://s.altnet.rippletest.net:51234/') // null
 * endpointUrlProblem('https://user:pw@node.example')          // 'must not carry credentials …'
 */
export function endpointUrlProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value === '') return 'must be an http(s) URL';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must be an http(s) URL, not ${url.protocol.replace(/:$/, '')}`;
  if (url.username !== '' || url.password !== '') {
    return 'must not carry credentials (user:password@): URLs appear in errors and logs; give secrets through an environment variable';
  }
  return null;
}
