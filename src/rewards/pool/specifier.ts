/** How a verifier-module entry of a config becomes an import specifier (pool workers and the main process alike). */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * The import specifier of a module entry: URLs (file:, data:, node:) as they are; paths (absolute,
 * or relative to `base`, default the working directory) as file URLs; bare package names as they are.
 */
export function moduleSpecifier(m: string, base = process.cwd()): string {
  if (/^[a-z][a-z0-9+.-]+:/i.test(m)) return m;
  if (isAbsolute(m) || m.startsWith("./") || m.startsWith("../") || m === "." || m === "..") return pathToFileURL(resolve(base, m)).href;
  return m;
}
