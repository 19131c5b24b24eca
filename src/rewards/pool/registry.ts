/**
 * Verifiers by name, so that worker threads can find them: a worker imports the modules it is
 * told to (each registers its verifiers on import) and then calls them by name.
 *
 * A verifier takes structured-cloneable arguments and returns a structured-cloneable value (or a
 * promise of one). Typical: `(response, reference, options) => VerifierResult`.
 */

export type NamedVerifier = (...args: any[]) => unknown;

const verifiers = new Map<string, NamedVerifier>();

/** Register (or replace) a verifier under `name` in this thread. */
export function registerVerifier(name: string, fn: NamedVerifier): void {
  verifiers.set(name, fn);
}

/** The verifier registered under `name` in this thread, or undefined. */
export function getVerifier(name: string): NamedVerifier | undefined {
  return verifiers.get(name);
}

/** Names registered in this thread, sorted. */
export function verifierNames(): string[] {
  return [...verifiers.keys()].sort();
}
