export const REGENERATE: string;
export function httpApiMarkdown(): Promise<string>;
export function policyRulesMarkdown(): Promise<string>;
export function generated(): Promise<{ file: string; text: string }[]>;
/** The generated files that differ from what is on disk (repository-relative paths). */
export function staleFiles(): Promise<string[]>;
