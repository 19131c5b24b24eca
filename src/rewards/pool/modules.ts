/**
 * Verifier modules named in a config (`rl.verifierPool.modules`): each registers tasks or pool
 * verifiers when imported. The pool's workers import them; the main process must too, so that the
 * tasks they register exist where the trainer builds its data and held-out evaluation.
 */
import { UserError } from "../../util/errors.ts";
import { ensureTypeScriptLoader } from "../../util/ts-loader.ts";
import { VerifierPool } from "./pool.ts";
import { moduleSpecifier } from "./specifier.ts";

export { moduleSpecifier };

/**
 * Load verifier modules into this process, checking them in a worker thread first so that a
 * module that throws, exits or never finishes loading is reported instead of hanging or ending
 * the caller.
 * @param modules      module paths or URLs (see moduleSpecifier)
 * @param opts.loadTimeoutMs  most time the check may take to load them, ms (default 60 000)
 * @throws UserError naming the module and why it cannot be loaded, e.g.
 *   `cannot load verifier module file:///x/task.ts: Cannot find module '/x/task.ts' …; check rl.verifierPool.modules`
 */
export async function loadVerifierModules(modules: readonly string[], opts: { loadTimeoutMs?: number } = {}): Promise<void> {
  if (modules.length === 0) return;
  const specs = modules.map((m) => moduleSpecifier(m));
  const probe = new VerifierPool({ size: 1, modules: specs, preloadMath: false, loadTimeoutMs: opts.loadTimeoutMs });
  try {
    await probe.ready();
    if (probe.loadError) throw new UserError(`config error at rl.verifierPool.modules: ${probe.loadError}`);
  } finally {
    await probe.close();
  }
  for (const s of specs) {
    try {
      await ensureTypeScriptLoader(s);
      await import(s);
    } catch (e) {
      throw new UserError(`config error at rl.verifierPool.modules: cannot load verifier module ${s}: ${(e as Error).message.split("\n")[0]}`, { cause: e });
    }
  }
}
