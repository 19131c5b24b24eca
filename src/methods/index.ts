/**
 * The method registry with every built-in method registered, in a fixed order of transforms
 * within each stage (`order`): collect stage GHPO's hints; reward stage TTRL (10) → EVOL-RL (20) → ReLIFT (30) → LUFFY (40) →
 * KDRL (50); advantages stage EAR; optimize stage LUFFY's loss → CHORD's scaling → KDRL's term.
 * RAFT filters in the reward stage and trains with the SFT loss in the optimize stage; self-play
 * is the collect stage's source. User methods (defineMethod) default to order 100.
 */
import { registerConfigCheck, type RunConfig } from "../config/schema.ts";
import { getAdvantage } from "../algorithms/index.ts";
import type { RunContext } from "../pipeline/context.ts";
import { mergeHooks, type RlStageHooks } from "../pipeline/hooks.ts";
import { builtinMethodOptions } from "./config.ts";
import { enabledMethods, listMethods } from "./define.ts";
import "./ghpo.ts";
import "./ttrl.ts";
import "./evol.ts";
import "./ear.ts";
import "./relift.ts";
import "./luffy.ts";
import "./chord.ts";
import "./kdrl.ts";
import "./raft.ts";
import "./selfplay.ts";

export { HOOK_STAGES, defineMethod, enabledMethods, getMethod, listMethods, type Method, type MethodNeeds, type MethodSpec, type MethodStage } from "./define.ts";

/**
 * Check the methods a config enables against the rest of it, by what each declares it needs.
 * `cfg.algorithm` must be resolved (parseRunConfig does it first).
 * @throws Error "config error at <field>: <why and the fix>".
 */
export function validateMethods(cfg: RunConfig): void {
  // Built-ins are keyed by their options block (expert: LUFFY/CHORD), user methods by name.
  const known = new Set([...Object.keys(builtinMethodOptions), ...listMethods().filter((m) => m.configPath === `methods.${m.name}`).map((m) => m.name)]);
  for (const name of Object.keys(cfg.methods ?? {})) {
    if (!known.has(name)) throw new Error(`config error at methods.${name}: no method "${name}" is registered; registered: ${[...known].join(", ")} (defineMethod registers one; load it with plugins:)`);
  }
  const on = enabledMethods(cfg);
  const tokenLevel = cfg.rl && cfg.algorithm ? getAdvantage(cfg.algorithm.advantage.name).level === "token" : false;
  for (const { method: m, options } of on) {
    if (m.needs.groups && cfg.rl?.groupSize === 1) throw new Error(`config error at ${m.configPath}: ${m.name} compares several responses per prompt; set rl.groupSize >= 2`);
    if (m.needs.synchronous && (cfg.rl?.async?.maxStaleness ?? 0) > 0) throw new Error(`config error at rl.async: ${m.name} (${m.configPath}) changes the weights between RL steps, which asynchronous rollouts cannot account for; remove rl.async or ${m.configPath}`);
    if (m.needs.sequenceAdvantages && tokenLevel) throw new Error(`config error at ${m.configPath}: ${m.name} uses sequence advantages; "${cfg.algorithm!.advantage.name}" gives per-token advantages. Use a sequence-level estimator (e.g. grpo) or drop ${m.configPath}`);
    m.validate?.(cfg, options);
  }
}

// Config validation runs the method checks at load (parseRunConfig), without importing methods/.
registerConfigCheck("methods", validateMethods);

/** The RL-stage hooks of every method a run config enables, merged in method order ({} when none). */
export function buildMethodHooks(ctx: RunContext, cfg: RunConfig): RlStageHooks {
  validateMethods(cfg);
  return mergeHooks(...enabledMethods(cfg).map(({ method, options }) => method.build(ctx, options)));
}
