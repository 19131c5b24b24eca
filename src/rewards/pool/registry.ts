/**
 * The pool's view of the one verifier registry (src/rewards/registry.ts): a worker imports the
 * modules it is told to (each registers verifiers or tasks on import), looks a verifier up by name
 * and calls it with the job's structured-cloneable arguments — `(response, example, ctx)` for a
 * registered Verifier (its verify), or whatever arguments the caller sent for a verifier
 * registered here as a bare function.
 */
import { findVerifier, registerVerifier as register, verifierNames, verifierSources, type Verifier } from "../registry.ts";

export { verifierNames };

export type NamedVerifier = (...args: any[]) => unknown;

/** Register (or replace) a verifier under `name` in this thread: a Verifier or a bare function. */
export function registerVerifier(name: string, fn: NamedVerifier | Verifier<any>): void {
  register(name, typeof fn === "function" ? ({ name, verify: fn } as Verifier<any>) : fn, { replace: true });
}

/**
 * The verifier registered under `name` in this thread, as a function of the call's arguments.
 * A name not registered yet may be a procedural task's: the returned function then imports the
 * verifier sources (addVerifierSource: the tasks; once, kept out of the worker's start-up) and
 * looks again, rejecting with `unknown verifier "<name>"` when it is still missing.
 */
export function getVerifier(name: string): NamedVerifier {
  const v = findVerifier(name);
  if (v) return (...args: unknown[]) => (v.verify as NamedVerifier)(...args);
  return async (...args: unknown[]) => {
    for (const source of verifierSources()) await import(source);
    const w = findVerifier(name);
    if (!w) throw new Error(`unknown verifier "${name}" (registered: ${verifierNames().join(", ")})`);
    return (w.verify as NamedVerifier)(...args);
  };
}
