// The layering of src/ (docs/architecture.md), checked by dependency-cruiser in npm test
// (test/layering.test.ts) and by hand with `npx depcruise src`.
//
// Each folder of src/ sits in one layer and imports only from its own layer and the layers below
// it, type-only imports included; no module takes part in an import circle. Folders in one layer
// (e.g. algorithms/ and rewards/) may import each other, but not in a circle.

/** Bottom up. A folder of src/ not listed here is an error of the layering test. */
const LAYERS = [
  ["util"], //                        error helpers, the RNG, suggestions, the TypeScript loader
  ["core"], //                        the engine contract, Example, sequences, schedules
  ["tokenizers"], //                  text ⇄ ids, chat and prompt templates
  ["engines"], //                     embedded, torch; the model block's schema, openEngine, the probe
  ["algorithms", "rewards"], //       advantages, losses, KL; verifiers and reward composition
  ["tasks", "envs"], //               procedural tasks and dataset loaders (graded by rewards/)
  ["rollout"], //                     group sampling, samplers (vLLM, OpenAI), tree and agent rollouts
  ["config"], //                      the run config: composes the layers' schemas (see OPTION_SCHEMAS)
  ["pipeline"], //                    the RL step, its state, hooks and context type
  ["eval"], //                        pass@k, maj@k, held-out accuracy, reports
  ["methods"], //                     guided and label-free methods, one file each with its options schema beside it
  ["trainer"], //                     the run: builds the context, stages, checkpoints, lock
  ["serve", "recipes", "tinker", "dashboard"], // servers, the quickstart recipes, the dashboard
  ["api", "cli", "browser", "index.ts"], //      the public API, the CLI, the browser session
];

/**
 * Known upward imports, each with the issue that removes it: neither the import nor the circles it
 * closes are reported. Keep this list short and delete an entry as soon as its import is gone.
 */
const KNOWN = [];

/**
 * Option schemas of a layer above config/ (zod only) that config/schema.ts composes: config/ may
 * import them, and they may import nothing but zod and each other, so config/ runs none of their
 * module's code: methods/<method>-options.ts and methods/config.ts, which composes the `methods`
 * block from them.
 */
const OPTION_SCHEMAS = "^src/methods/(config|[a-z]+-options)\\.ts$";

const path = (names) => `^src/(${names.map((n) => n.replace(".", "\\.")).join("|")})($|/)`;

const layerRules = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer:${layer.join(",")}`,
  comment: `${layer.join(", ")} may import only from layers at or below their own (docs/architecture.md)`,
  severity: "error",
  from: { path: path(layer) },
  to: { path: path(LAYERS.slice(i + 1).flat()), ...(layer.includes("config") ? { pathNot: OPTION_SCHEMAS } : {}) },
}));

const exact = (file) => `^${file.replace(/[.]/g, "\\.")}$`;
const knownTargets = KNOWN.map((k) => exact(k.to));
/** Circles through no known import's target, and circles through a target but not its known source. */
const circleRules = [
  { to: { circular: true, ...(KNOWN.length ? { viaOnly: { pathNot: knownTargets } } : {}) } },
  ...KNOWN.map((k) => ({ to: { circular: true, via: { path: exact(k.to) }, viaOnly: { pathNot: exact(k.from) } } })),
].map((rule) => ({
  name: "no-circular",
  comment: "an import circle: one of its imports must point down instead (docs/architecture.md)",
  severity: "error",
  from: { path: "^src/" },
  ...rule,
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...circleRules,
    {
      name: "option-schemas-only-zod",
      comment: "an option schema that config/ composes imports only zod and other option schemas",
      severity: "error",
      from: { path: OPTION_SCHEMAS },
      to: { pathNot: [OPTION_SCHEMAS, "(^|/)node_modules/zod/"] },
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
    knownViolations: KNOWN.map(({ from, to }) => ({ type: "dependency", from, to, rule: { name: `layer:${LAYERS.find((l) => l.includes(from.split("/")[1])).join(",")}`, severity: "error" } })),
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|dist)/" },
    tsPreCompilationDeps: true,
    combinedDependencies: false,
  },
};
