/**
 * The reward stage: verdicts → the step's outcome rewards [R].
 *
 * Order (explicit, the same every step): the verifier's reward (already composed from the run's
 * `reward:` components by the reward layer) → DAPO soft overlong punishment (`algorithm.overlong`)
 * → method reward transforms in their declared order (TTRL's majority vote, EVOL-RL's novelty,
 * ReLIFT's hard-group buffer, LUFFY's expert sequences, KDRL's teacher scores; src/methods/).
 * The KL-in-reward penalty comes after all of them, in the reference stage, so no transform can
 * drop it.
 */
import type { AlgorithmConfig } from "../algorithms/index.ts";
import { dapoOverlongPenalty } from "../algorithms/shaping.ts";
import type { UpdateBatch } from "./batch.ts";
import type { UpdateContext, UpdateHooks } from "./update-types.ts";

/** Fill `batch.rewards` (and methods' extra sequences and metrics). */
export async function reward<B extends UpdateBatch>(ctx: UpdateContext, alg: AlgorithmConfig, batch: B, hooks: UpdateHooks<NoInfer<B>>): Promise<B> {
  batch.rewards = Float32Array.from(batch.verdicts.map((v) => v.reward));
  if (alg.overlong?.enabled) overlongShaping(ctx, alg, batch);
  const res = hooks.rewards ? await hooks.rewards(batch) : undefined;
  if (res?.rewards) batch.rewards = res.rewards;
  if (res?.extra) batch.extra = res.extra;
  Object.assign(batch.metrics, res?.metrics);
  return batch;
}

/**
 * DAPO soft overlong punishment added to each reward; logs reward/overlong_penalty (mean).
 * @throws Error naming algorithm.overlong.maxLength when neither it nor rl.maxNewTokens gives the length.
 */
function overlongShaping(ctx: UpdateContext, alg: AlgorithmConfig, batch: UpdateBatch): void {
  const o = alg.overlong!;
  const maxLength = o.maxLength ?? ctx.cfg?.rl?.maxNewTokens;
  if (maxLength === undefined) throw new Error("config error at algorithm.overlong.maxLength: the overlong punishment needs the maximum response length here (there is no rl.maxNewTokens); set it");
  const buffer = o.buffer ?? Math.max(1, Math.round(o.bufferFraction * maxLength));
  let total = 0;
  for (let i = 0; i < batch.rewards.length; i++) {
    const p = dapoOverlongPenalty(batch.lengths[i]!, maxLength, Math.min(buffer, maxLength), o.factor);
    batch.rewards[i] = batch.rewards[i]! + p;
    total += p;
  }
  batch.metrics["reward/overlong_penalty"] = total / Math.max(1, batch.rewards.length);
}
