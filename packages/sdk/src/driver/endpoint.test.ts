import { describe, expect, it } from 'vitest';
import { endpointUrlProblem } from './endpoint.js';

describe('endpointUrlProblem', () => {
  it('accepts http and https URLs, with ports and paths', () => {
    expect(endpointUrlProblem('http://127.0.0.1:5005')).toBeNull();
    expect(endpointUrlProblem('https://horizon-testnet.stellar.org/')).toBeNull();
    expect(endpointUrlProblem('https://rpc.example/v1/abc?x=1')).toBeNull();
  });

  it('refuses what is not a string or does not parse', () => {
    for (const v of [undefined, null, 7, '', 'not a url', '127.0.0.1:5005']) expect(endpointUrlProblem(v)).toBe('must be an http(s) URL');
  });

  it('refuses other schemes, naming the scheme', () => {
    expect(endpointUrlProblem('ftp://node.example')).toBe('must be an http(s) URL, not ftp');
    expect(endpointUrlProblem('file:///etc/passwd')).toBe('must be an http(s) URL, not file');
    expect(endpointUrlProblem('ws://node.example')).toBe('must be an http(s) URL, not ws');
  });

  it('attack: credentials in the URL are refused (they would reach errors and logs)', () => {
    expect(endpointUrlProblem('https://user:secret@node.example')).toMatch(/^must not carry credentials/);
    expect(endpointUrlProblem('https://token@node.example')).toMatch(/^must not carry credentials/);
    expect(endpointUrlProblem('https://:secret@node.example')).toMatch(/^must not carry credentials/);
  });
});
