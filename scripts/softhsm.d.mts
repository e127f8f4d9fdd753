/** Types of scripts/softhsm.mjs (plain Node ESM, imported by TypeScript tests). */
export declare const INSTALL_HINT: string;
export declare function findSoftHsm(): { module: string; util: string } | null;
export declare function ensureSoftHsm(options?: { install?: boolean; log?: (line: string) => void }): { module: string; util: string };
export interface SoftToken {
  dir: string;
  conf: string;
  tokens: string;
  module: string;
  util: string;
  addToken(label: string, pin: string): void;
}
export declare function initSoftToken(options: { label: string; pin: string; soPin?: string; dir?: string }): SoftToken;
