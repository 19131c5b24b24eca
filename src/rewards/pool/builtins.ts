/**
 * Registers the built-in verifiers under their pool names:
 *   math(response, reference, opts?)          → src/rewards/math (loaded on first use)
 *   choice(response, reference, opts?)        exact(response, reference, opts?)
 *   f1(response, reference, opts?)            format(response, opts?)   (RegExp templates: pass a string)
 *   ifeval(response, constraints, opts?)      code(response, tests, opts)
 *   task(taskName, response, example)         → a registered task's verifier (src/tasks, loaded on first use)
 * Importing this module has only that effect; workers import it at start.
 */
import { registerVerifier } from "./registry.ts";
import { verifyChoice } from "../choice.ts";
import { verifyExactMatch, verifyTokenF1 } from "../exact.ts";
import { verifyFormat } from "../format.ts";
import { verifyConstraints } from "../ifeval/index.ts";
import { runCodeTests } from "../code/run-tests.ts";
import { loadMath } from "../math-bridge.ts";

registerVerifier("choice", verifyChoice);
registerVerifier("exact", verifyExactMatch);
registerVerifier("f1", verifyTokenF1);
registerVerifier("format", verifyFormat);
registerVerifier("ifeval", verifyConstraints);
registerVerifier("code", runCodeTests);
registerVerifier("math", async (response: string, reference: string, opts?: unknown) => (await loadMath()).verifyMath(response, reference, opts));
registerVerifier("task", async (taskName: string, response: string, example: unknown) => {
  const { getTask } = await import("../../tasks/index.ts");
  return getTask(taskName).verify(response, example as never);
});
