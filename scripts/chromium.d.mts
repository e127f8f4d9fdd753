/** Types of scripts/chromium.mjs (plain Node ESM, imported by TypeScript tests). */
export declare const INSTALL_HINT: string;
export declare function findChromium(): string | null;
export declare function ensureChromium(options?: { install?: boolean; log?: (line: string) => void }): string;
