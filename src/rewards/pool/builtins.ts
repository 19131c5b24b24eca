/**
 * Loads the built-in verifiers (src/rewards/verifiers.ts: exact, f1, choice, math, format, ifeval,
 * code, majority, task, module) into the registry of this thread. Workers import it at start; a
 * pool call names a verifier and passes `(response, example, ctx)`. The procedural tasks (each
 * registers its verifier under its name) load on the first call that names one (./registry.ts).
 */
import "../verifiers.ts";
