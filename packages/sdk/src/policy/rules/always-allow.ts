import type { RuleModule } from '../types.js';

/** always_allow: allows; makes an otherwise empty policy explicit. */
export const alwaysAllow: RuleModule<'always_allow'> = {
  kind: 'always_allow',
  evaluate: () => ({ effect: 'pass' }),
};
