import { describe, expect, it } from 'vitest';
import { redact } from './http.js';

describe('redact: secrets where they stand as values, not inside words', () => {
  it('a redacted passphrase "a" leaves "wrong passphrase" readable', () => {
    expect(redact('wrong passphrase', ['a'])).toBe('wrong passphrase');
  });

  it('a short secret standing as a value is redacted, whatever surrounds it', () => {
    for (const [text, want] of [
      ['a', '[redacted]'],
      ['passphrase a refused', 'passphrase [redacted] refused'],
      ['{"passphrase":"a"}', '{"passphrase":"[redacted]"}'],
      ['passphrase=a;', 'passphrase=[redacted];'],
      ['tried a,a', 'tried [redacted],[redacted]'],
    ] as const) {
      expect(redact(text, ['a'])).toBe(want);
    }
  });

  it('a secret made of symbols is matched literally (no regular-expression meaning)', () => {
    expect(redact('got x.*y and xAAy', ['x.*y'])).toBe('got [redacted] and xAAy');
    expect(redact('(a|b) then [c]', ['(a|b)', '[c]'])).toBe('[redacted] then [redacted]');
  });

  it('a short secret inside a longer word is left alone; letters of any script count as a word', () => {
    expect(redact('hunter2s and hunter2', ['hunter2'])).toBe('hunter2s and [redacted]');
    expect(redact('éa aé a', ['a'])).toBe('éa aé [redacted]');
  });

  it('a long secret (a session token) is redacted even glued to other text', () => {
    const token = 'tok_S3cr3t-Session-Token_0123456789abcdef';
    expect(redact(`Bearer${token}x and ${token}`, [token])).toBe('Bearer[redacted]x and [redacted]');
  });

  it('a secret that contains another is redacted whole', () => {
    expect(redact('pass: abc abcdef', ['abc', 'abcdef'])).toBe('pass: [redacted] [redacted]');
    expect(redact('pass: abcdef', ['abc', 'abcdef'])).not.toContain('def');
  });

  it('no secrets, or an empty one, changes nothing', () => {
    expect(redact('wrong passphrase', undefined)).toBe('wrong passphrase');
    expect(redact('wrong passphrase', [''])).toBe('wrong passphrase');
  });
});
