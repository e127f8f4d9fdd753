import type { RuleModule } from '../types.js';

/** require_tag: deny unless the intent carries a tag `[key, value]` (any value when unset). */
export const requireTag: RuleModule<'require_tag'> = {
  kind: 'require_tag',
  evaluate(rule, input, label) {
    const tags = input.intent.tags ?? [];
    const ok = tags.some(([k, v]) => k === rule.key && (rule.value === undefined || v === rule.value));
    if (ok) return { effect: 'pass' };
    const want = rule.value === undefined ? `"${rule.key}"` : `"${rule.key}"="${rule.value}"`;
    return { effect: 'deny', reason: `${label}: tag ${want} is required (intent has ${tags.length} tag(s))` };
  },
};
