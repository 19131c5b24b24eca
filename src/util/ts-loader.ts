/**
 * TypeScript user modules (config plugins, `reward: {module: ./x.ts}`, verifier-pool modules) when
 * rlvr runs compiled: Node cannot import `.ts` by itself, so the loader tsx is registered on the
 * first such module. tsx is an optional peer dependency of the package; without it the error says
 * what to install. When rlvr runs from its sources, a TypeScript loader is already active.
 */

const TS_MODULE = /\.(c|m)?tsx?$/;
let registered = import.meta.url.endsWith(".ts"); // running from sources: tsx is active

/** Whether `spec` (a path or URL) names a TypeScript module. */
export function isTypeScriptModule(spec: string): boolean {
  return TS_MODULE.test(spec.split(/[?#]/)[0]!);
}

/**
 * Make `spec` importable: registers tsx once when `spec` is TypeScript and no loader is active.
 * @throws Error `<spec> is TypeScript, which needs the loader tsx: run "npm install tsx" …` when tsx is not installed
 */
export async function ensureTypeScriptLoader(spec: string): Promise<void> {
  if (registered || !isTypeScriptModule(spec)) return;
  let api: { register: () => unknown };
  try {
    api = await import("tsx/esm/api");
  } catch {
    throw new Error(`${spec} is TypeScript, which needs the loader tsx: run "npm install tsx" (or compile it and name its .js)`);
  }
  api.register();
  registered = true;
}
