/** Types of scripts/build-web.mjs (plain Node ESM, imported by TypeScript tests). */
export declare function buildWeb(out?: string): Promise<string[]>;
