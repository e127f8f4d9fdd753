/** Types of scripts/chromium.mjs (plain Node ESM, imported by TypeScript tests). */
export declare const INSTALL_COMMAND: string;
export declare function chromiumPath(): string;
