// Installed versions of the peers, read from their package.json files (what actually ran).
import { readFileSync } from 'node:fs';

export function installedVersion(pkg: string): string | undefined {
  try {
    const text = readFileSync(new URL(`../../node_modules/${pkg}/package.json`, import.meta.url), 'utf8');
    return (JSON.parse(text) as { version?: string }).version;
  } catch {
    return undefined;
  }
}
