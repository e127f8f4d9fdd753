export const PNPM_VERSION: string;
export const ROOT: string;
export const DEFAULT_TARBALL_DIR: string;
export function pnpmCommand(): { cmd: string; pre: string[] };
export interface WorkspacePackage {
  name: string;
  version: string;
  dir: string;
  manifest: Record<string, unknown>;
}
export function publishablePackages(): WorkspacePackage[];
export function tarballName(p: { name: string; version: string }): string;
export function packTarballs(dest?: string, options?: { quiet?: boolean }): string[];
