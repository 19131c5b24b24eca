/**
 * Inert knobs are errors: a config field that has no effect under the chosen engine, sampler,
 * mode or device is refused at load, with one line saying why and what to change
 * (SkyRL #644: configs that accept knobs which do nothing).
 *
 * A field counts as set when the config file (the raw input, before defaults) names it with a
 * value other than its schema default, so a default never trips a rule, and a run directory's
 * config.yaml (written with every default filled in) still loads for --resume and eval. The rules read the parsed config for the choices that make a field
 * inert. Audit of the schema (src/config/schema.ts and the blocks it imports), by field:
 *
 * | field(s)                                            | inert when                                   |
 * |-----------------------------------------------------|----------------------------------------------|
 * | model.device, dtype, gradientCheckpointing, tokenBudget, callTimeoutS, loadTimeoutS | model.engine embedded (torch only; `auto` may pick torch, so allowed). model.python is read there too (the engine advice probes torch) |
 * | model.init                                          | model.path is set (the checkpoint is loaded) |
 * | model.lora.baseDtype                                | model.engine torch (it keeps model.dtype)    |
 * | model.nativeKernels                                | model.engine torch or tinker (the embedded engine's kernels) |
 * | model.lora.dropout > 0                              | model.engine embedded (trains without dropout) |
 * | rollout.* except engine                             | rollout.engine trainer (the default)         |
 * | rollout.baseURL, model, apiKey                      | rollout.engine vllm (openai options)         |
 * | rollout.mode, urls, servers, python, gpuMemoryUtilization, kvCacheGiB, sleep, dtype, startupTimeoutS, extraArgs, mismatchCorrection | rollout.engine openai (vLLM options) |
 * | rollout.servers, extraArgs, syncDir, healthTimeoutS, healthIntervalS, maxRestarts | vLLM colocated (server-mode options) |
 * | rollout.python                                      | vLLM colocated with model.python set         |
 * | rollout.sleep                                       | vLLM server mode (colocated only)            |
 * | rollout.servers, python, gpuMemoryUtilization, kvCacheGiB, dtype, startupTimeoutS, extraArgs | vLLM server mode with urls (rlvr starts no server) |
 * | rollout.gpuMemoryUtilization, sleep                 | vLLM on CPU (model.engine embedded or model.device cpu) |
 * | rollout.kvCacheGiB                                  | vLLM on a GPU (model.device cuda…)           |
 * | rollout.mismatchCorrection                          | rl.algorithm.mismatch is set (it only sets a default) |
 * | rl.topP, rl.topK; eval.greedy                       | the temperature is 0 (greedy decoding)       |
 * | eval.samples > 1                                    | eval.temperature 0 (k copies of one response) |
 * | eval.every                                          | no rl block (it counts RL steps)             |
 * | rl.minLrRatio, sft.minLrRatio                       | schedule constant                            |
 * | rl.verifierPool.* except enabled                    | the pool is not enabled (default off)        |
 * | any other field of a block with `enabled: false`    | always (the block is off)                    |
 * | data.trainSize, data.difficulty                     | data.train is set (loaded, not generated)    |
 * | data.testSize                                       | data.train set without data.test             |
 * | data.test, onBadRow                                 | no data.train (examples are generated)       |
 * Every other field is read under every engine, sampler, mode and device (data.preset and
 * data.fields also by `rlvr eval <run> --data` and the audits, whatever the run trained on). rl.async has one field
 * (maxStaleness; 0 = synchronous), so it has no option that async-off makes inert.
 */
/**
 * The fields of a parsed run config the rules read (a structural subset of RunConfig, so this
 * module does not import schema.ts, which calls it).
 */
export interface InertCheckedConfig {
  model: { engine: string; device: string; path?: string | undefined; python?: string | undefined };
  rollout?: { engine: string; mode: string; urls?: string[] | undefined } | undefined;
  data: { train?: unknown; test?: unknown };
  eval: { temperature: number; samples: number };
  rl?: { temperature: number; schedule: string; verifierPool: { enabled: boolean } } | undefined;
  sft?: { schedule: string } | undefined;
}
type RunConfig = InertCheckedConfig;

/** An inert field: its dotted path and why it has no effect, ending with the fix. */
export interface InertField {
  field: string;
  why: string;
}

type Raw = Record<string, unknown>;

/** The value at dotted `path` in the raw config, or undefined. */
function at(raw: unknown, path: string): unknown {
  let o: unknown = raw;
  for (const k of path.split(".")) o = o && typeof o === "object" && !Array.isArray(o) ? (o as Raw)[k] : undefined;
  return o;
}

/** One rule: the fields it covers and, given the raw and parsed config, why they are inert (null: they act). */
interface Rule {
  fields: readonly string[];
  inert: (raw: unknown, cfg: RunConfig) => string | null;
}

const TORCH_ONLY = ["model.device", "model.dtype", "model.gradientCheckpointing", "model.tokenBudget", "model.callTimeoutS", "model.loadTimeoutS"];
const OPENAI = ["baseURL", "model", "apiKey"].map((f) => `rollout.${f}`);
const VLLM = ["mode", "urls", "servers", "python", "gpuMemoryUtilization", "kvCacheGiB", "sleep", "dtype", "startupTimeoutS", "extraArgs", "mismatchCorrection", "healthTimeoutS", "healthIntervalS", "maxRestarts"].map((f) => `rollout.${f}`);
const SERVER_ONLY = ["servers", "extraArgs", "syncDir", "healthTimeoutS", "healthIntervalS", "maxRestarts"].map((f) => `rollout.${f}`);
const SERVER_FLAGS = ["servers", "python", "gpuMemoryUtilization", "kvCacheGiB", "dtype", "startupTimeoutS", "extraArgs"].map((f) => `rollout.${f}`);
const ROLLOUT_ALL = [...new Set([...OPENAI, ...VLLM, "rollout.syncDir", "rollout.requestTimeoutS", "rollout.syncTimeoutS"])];

const vllm = (c: RunConfig) => c.rollout?.engine === "vllm";
const onCpu = (c: RunConfig) => c.model.engine === "embedded" || c.model.device === "cpu";

/** The rules, in the order of the table above. */
export const INERT_RULES: readonly Rule[] = [
  { fields: TORCH_ONLY, inert: (_, c) => (c.model.engine === "embedded" ? "a torch-engine option, and model.engine is embedded; set model.engine: torch (or auto), or remove it" : null) },
  { fields: ["model.init"], inert: (_, c) => (c.model.path !== undefined ? "model.path is loaded, so the random-model shape is unused; remove model.init or model.path" : null) },
  { fields: ["model.nativeKernels"], inert: (_, c) => (c.model.engine === "torch" || c.model.engine === "tinker" ? `the embedded engine's kernels, and model.engine is ${c.model.engine}; remove it` : null) },
  { fields: ["model.lora.baseDtype"], inert: (_, c) => (c.model.engine === "torch" ? "the embedded engine's storage of the frozen base; the torch engine keeps model.dtype. Remove it (or set model.dtype)" : null) },
  { fields: ["model.lora.dropout"], inert: (raw, c) => (c.model.engine === "embedded" && Number(at(raw, "model.lora.dropout")) > 0 ? "the embedded engine trains LoRA without dropout; set 0, or use model.engine: torch" : null) },
  { fields: ROLLOUT_ALL, inert: (_, c) => ((c.rollout?.engine ?? "trainer") === "trainer" ? "configures vLLM or OpenAI-server rollouts, and rollout.engine is trainer (the default); set rollout.engine, or remove it" : null) },
  { fields: OPENAI, inert: (_, c) => (vllm(c) ? "an option of rollout.engine: openai, and rollout.engine is vllm; remove it" : null) },
  { fields: VLLM, inert: (_, c) => (c.rollout?.engine === "openai" ? "a vLLM option, and rollout.engine is openai (a server rlvr neither starts nor corrects for); remove it" : null) },
  { fields: SERVER_ONLY, inert: (_, c) => (vllm(c) && c.rollout!.mode === "colocated" ? "an option of rollout.mode: server, and vLLM runs colocated; set rollout.mode: server, or remove it" : null) },
  { fields: ["rollout.python"], inert: (_, c) => (vllm(c) && c.rollout!.mode === "colocated" && c.model.python !== undefined ? "colocated vLLM runs in the torch worker, whose Python is model.python; remove one of them" : null) },
  { fields: ["rollout.sleep"], inert: (_, c) => (vllm(c) && c.rollout!.mode === "server" ? "colocated vLLM only (a server keeps its memory); remove it or set rollout.mode: colocated" : null) },
  { fields: SERVER_FLAGS, inert: (_, c) => (vllm(c) && c.rollout!.mode === "server" && c.rollout!.urls !== undefined ? "sets up servers rlvr starts, and rollout.urls names running ones; pass it to those servers, or remove rollout.urls" : null) },
  { fields: ["rollout.gpuMemoryUtilization", "rollout.sleep"], inert: (_, c) => (vllm(c) && onCpu(c) ? `GPU only, and vLLM runs on the CPU (${c.model.engine === "embedded" ? "model.engine embedded" : "model.device cpu"}); use rollout.kvCacheGiB for the CPU, or remove it` : null) },
  { fields: ["rollout.kvCacheGiB"], inert: (_, c) => (vllm(c) && c.model.device.startsWith("cuda") ? "CPU only; on a GPU vLLM's KV cache is sized by rollout.gpuMemoryUtilization. Remove it" : null) },
  { fields: ["rollout.mismatchCorrection"], inert: (raw) => (at(raw, "rl.algorithm.mismatch") !== undefined ? "it only turns on rl.algorithm.mismatch when the config does not set it, and the config sets it; remove one of them" : null) },
  { fields: ["rl.topP", "rl.topK"], inert: (_, c) => (c.rl?.temperature === 0 ? "rl.temperature is 0 (greedy decoding), which ignores it; raise the temperature, or remove it" : null) },
  { fields: ["eval.greedy"], inert: (_, c) => (c.eval.temperature === 0 ? "eval.temperature 0 already decodes greedily; remove it, or raise eval.temperature" : null) },
  { fields: ["eval.samples"], inert: (_, c) => (c.eval.temperature === 0 && c.eval.samples > 1 ? "eval.temperature 0 draws the same greedy response every time; set eval.temperature > 0, or eval.samples 1" : null) },
  { fields: ["eval.every"], inert: (_, c) => (c.rl === undefined ? "it counts RL steps, and the config has no rl block; remove it" : null) },
  { fields: ["rl.minLrRatio"], inert: (_, c) => (c.rl?.schedule === "constant" ? "the floor of the cosine schedule, and rl.schedule is constant; set rl.schedule: cosine, or remove it" : null) },
  { fields: ["sft.minLrRatio"], inert: (_, c) => (c.sft?.schedule === "constant" ? "the floor of the cosine schedule, and sft.schedule is constant; set sft.schedule: cosine, or remove it" : null) },
  { fields: ["size", "timeoutMs", "fallback", "modules"].map((f) => `rl.verifierPool.${f}`), inert: (_, c) => (c.rl?.verifierPool.enabled ? null : "the verifier pool is off (rl.verifierPool.enabled defaults to false); set enabled: true, or remove it") },
  { fields: ["data.trainSize", "data.difficulty"], inert: (_, c) => (c.data.train !== undefined ? "sizes generated examples, and data.train is loaded from a file; remove it" : null) },
  { fields: ["data.testSize"], inert: (_, c) => (c.data.train !== undefined && c.data.test === undefined ? "caps data.test, which is not set; set data.test, or remove it" : null) },
  { fields: ["data.test", "data.onBadRow"], inert: (_, c) => (c.data.train === undefined ? "reads dataset files, and without data.train the examples are generated from data.task; set data.train, or remove it" : null) },
];

/** The schema default of a dotted field path (undefined when it has none). */
export type DefaultOf = (path: string) => unknown;

/** Whether `raw` sets `path` to something other than its default. */
function isSet(raw: unknown, path: string, defaultOf: DefaultOf): boolean {
  const v = at(raw, path);
  return v !== undefined && JSON.stringify(v) !== JSON.stringify(defaultOf(path));
}

/** The first field of a block switched off with `enabled: false` (anywhere in the config), or null. */
function disabledBlockField(raw: unknown, defaultOf: DefaultOf, root = raw, prefix = ""): InertField | null {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return null;
  const o = raw as Raw;
  const path = (k: string) => (prefix ? `${prefix}.${k}` : k);
  if (o["enabled"] === false) {
    const other = Object.keys(o).find((k) => k !== "enabled" && isSet(root, path(k), defaultOf));
    if (other) return { field: path(other), why: `${prefix}.enabled is false, so the block's options do nothing; remove them, or enable the block` };
  }
  for (const [k, v] of Object.entries(o)) {
    if (!prefix && k === "methods") continue; // a registered method's options are its own
    const hit = disabledBlockField(v, defaultOf, root, path(k));
    if (hit) return hit;
  }
  return null;
}

/**
 * The first field of `raw` that has no effect under `cfg`'s engine, sampler, mode and device.
 * @param raw the config as written (before defaults): a field counts only when it is set there
 * @param cfg the same config parsed (defaults applied)
 * @param defaultOf the schema default of a field (a value equal to it counts as unset)
 * @returns null when every set field acts, else the field and why it is inert (with the fix)
 */
export function findInertField(raw: unknown, cfg: RunConfig, defaultOf: DefaultOf = () => undefined): InertField | null {
  for (const rule of INERT_RULES) {
    const field = rule.fields.find((f) => isSet(raw, f, defaultOf));
    if (field === undefined) continue;
    const why = rule.inert(raw, cfg);
    if (why) return { field, why };
  }
  return disabledBlockField(raw, defaultOf);
}
