/**
 * Builds dist/ (the CLI test spawns dist/devnet/cli.js) when it is missing or older than src/.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

export default function setup(): void {
  const cli = join(root, 'dist/devnet/cli.js');
  if (existsSync(cli) && statSync(cli).mtimeMs >= newest(join(root, 'src'))) return;
  const tsup = createRequire(join(root, 'package.json')).resolve('tsup/dist/cli-default.js');
  execFileSync(process.execPath, [tsup], { cwd: root, stdio: 'ignore' });
}
