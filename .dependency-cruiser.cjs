// The layering of src/ (docs/architecture.md), checked by dependency-cruiser in npm test
// (test/layering.test.ts) and by hand with `npx depcruise src`.
//
// Each folder of src/ sits in one layer and imports only from its own layer and the layers below
// it, type-only imports included; no module takes part in an import circle. Folders in one layer
// (e.g. algorithms/ and rewards/) may import each other, but not in a circle.

/** Bottom up. A folder of src/ not listed here is an error of the layering test. */
const LAYERS = [
  ["util"], //                        error helpers, the RNG, suggestions, the TypeScript loader
  ["core"], //                        the engine contract, sequences, schedules
  ["tokenizers"], //                  text ⇄ ids, chat templates
  ["engines"], //                     embedded, torch, vLLM clients; openEngine
  ["algorithms", "rewards"], //       advantages, losses, KL; verifiers and reward composition
  ["tasks", "envs"], //               procedural tasks and dataset loaders (graded by rewards/)
  ["rollout"], //                     group sampling, samplers, tree and agent rollouts
  ["config"], //                      the run config: composes the schemas of the layers below
  ["pipeline"], //                    the RL step, its state, hooks and context type
  ["eval"], //                        pass@k, maj@k, held-out accuracy, reports
  ["methods", "guided", "labelfree"], // guided and label-free methods (issue 29 item 2 merges them)
  ["trainer"], //                     the run: builds the context, stages, checkpoints, lock
  ["serve", "recipes", "tinker", "dashboard"], // servers, the quickstart recipe, the dashboard
  ["api", "cli", "browser", "index.ts"], //      the public API, the CLI, the browser session
];

/**
 * Known violations, each with the issue that removes it: reported as ignored, not as errors.
 * Keep this list short; an entry that no longer occurs is harmless but should be deleted.
 */
const KNOWN = [];

const path = (names) => `^src/(${names.map((n) => n.replace(".", "\\.")).join("|")})($|/)`;

const layerRules = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer:${layer.join(",")}`,
  comment: `${layer.join(", ")} may import only from layers at or below their own (docs/architecture.md)`,
  severity: "error",
  from: { path: path(layer) },
  to: { path: path(LAYERS.slice(i + 1).flat()) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "an import circle: one of its imports must point down instead (docs/architecture.md)",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "unlayered-folder",
      comment: "a folder of src/ that is not in LAYERS of .dependency-cruiser.cjs: give it a layer",
      severity: "error",
      from: { path: "^src/", pathNot: path(LAYERS.flat()) },
      to: {},
    },
    ...layerRules,
  ],
  options: {
    knownViolations: KNOWN.map(({ rule, from, to }) => ({ type: "dependency", from, to, rule: { name: rule, severity: "error" } })),
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|dist)/" },
    tsPreCompilationDeps: true,
    combinedDependencies: false,
  },
};
