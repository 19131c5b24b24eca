/**
 * `forward` / `forward_backward` of the Tinker protocol on rlvr's engine contract.
 *
 * A Tinker datum is input tokens x[0..n) and per-position loss inputs, where position i holds the
 * data of `target_tokens[i]`, the token predicted after x[0..i]. rlvr's engines score a sequence's
 * own next tokens, so the datum becomes the sequence S = x[0..n) ++ [target_tokens[n−1]] and the
 * target log-prob of position i is the engine's log-prob of S[i+1] — exact wherever
 * target_tokens[i] = x[i+1] (a datum built by shifting, as every cookbook recipe does). At a
 * position where the target differs from the next input token the engine has no score: it is
 * reported as NaN, and a loss whose value or gradient depends on it is refused (the cookbook's
 * RL datums put dummy targets only on prompt positions with advantage 0, which no loss reads).
 */
import type { Engine, TokenBatch } from "../core/engine.ts";
import { tinkerLoss } from "../algorithms/losses/tinker.ts";
import type { ProtoForwardBackwardRequest } from "./proto.ts";
import { UserError } from "./futures.ts";

/** What forward/forward_backward returns: per-datum output arrays and the metrics. */
export interface ForwardResult {
  outputs: { logprobs: Float64Array; elementwise_loss: Float64Array }[];
  metrics: Record<string, number>;
}

interface Prepared {
  batch: TokenBatch;
  /** Per datum: target positions whose score the engine gives (target = next input token). */
  scorable: boolean[][];
  inputs: Record<string, Float64Array>;
  targetsLen: number[];
}

/** Check the datums and lay them out as one padded batch. @throws UserError naming datum and field. */
function prepare(req: ProtoForwardBackwardRequest, vocabSize: number): Prepared {
  if (req.data.length === 0) throw new UserError("forward_backward: data is empty");
  const seqs: number[][] = [];
  const scorable: boolean[][] = [];
  const targetsLen: number[] = [];
  const names = new Set<string>();
  req.data.forEach((d, b) => {
    const tt = d.lossFnInputs["target_tokens"];
    if (!tt) throw new UserError(`data[${b}].loss_fn_inputs.target_tokens is required`);
    const n = d.tokens.length;
    if (n === 0) throw new UserError(`data[${b}].model_input is empty`);
    if (tt.values.length !== n) throw new UserError(`data[${b}].loss_fn_inputs.target_tokens has ${tt.values.length} values, model_input has ${n} tokens (they must be equal)`);
    for (const [k, t] of Object.entries(d.lossFnInputs)) {
      if (t.values.length !== n) throw new UserError(`data[${b}].loss_fn_inputs.${k} has ${t.values.length} values, model_input has ${n} tokens`);
      names.add(k);
    }
    const seq = [...d.tokens, tt.values[n - 1]!];
    for (const id of seq) if (!Number.isInteger(id) || id < 0 || id >= vocabSize) throw new UserError(`data[${b}]: token id ${id} is outside the vocabulary [0, ${vocabSize})`);
    seqs.push(seq);
    scorable.push(Array.from({ length: n }, (_, i) => tt.values[i] === seq[i + 1]));
    targetsLen.push(n);
  });
  names.delete("target_tokens");
  const inputs: Record<string, Float64Array> = {};
  for (const k of names) {
    const parts = req.data.map((d, b) => {
      const t = d.lossFnInputs[k];
      if (!t) throw new UserError(`data[${b}].loss_fn_inputs.${k} is missing (data[0] has it)`);
      return t.values;
    });
    inputs[k] = Float64Array.from(parts.flatMap((p) => Array.from(p)));
  }
  const B = seqs.length;
  const T = Math.max(...seqs.map((s) => s.length));
  const tokens = new Int32Array(B * T);
  const lossMask = new Float32Array(B * T);
  seqs.forEach((s, b) => {
    tokens.set(s, b * T);
    scorable[b]!.forEach((ok, i) => {
      if (ok) lossMask[b * T + i + 1] = 1;
    });
  });
  return { batch: { batchSize: B, seqLen: T, tokens, lengths: Int32Array.from(seqs.map((s) => s.length)), lossMask }, scorable, inputs, targetsLen };
}

/** Target log-probs, concatenated over datums (NaN where unscorable), from the engine's per-token log-probs. */
function gatherTargets(p: Prepared, lp: Float32Array): Float64Array {
  const T = p.batch.seqLen;
  const out: number[] = [];
  p.scorable.forEach((row, b) => row.forEach((ok, i) => out.push(ok ? lp[b * T + i + 1]! : NaN)));
  return Float64Array.from(out);
}

function split(p: Prepared, flat: Float64Array): Float64Array[] {
  let o = 0;
  return p.targetsLen.map((n) => flat.slice(o, (o += n)));
}

function evaluate(req: ProtoForwardBackwardRequest, p: Prepared, target: Float64Array) {
  let res;
  try {
    res = tinkerLoss(req.lossFn, { targetLogprobs: target, inputs: p.inputs, config: req.lossFnConfig });
  } catch (e) {
    throw new UserError((e as Error).message);
  }
  if (!Number.isFinite(res.loss)) {
    const bad = res.elementwise.findIndex((v, i) => Number.isNaN(v) && Number.isNaN(target[i]!));
    if (bad >= 0) throw new UserError(`loss_fn ${req.lossFn} reads position ${bad} (concatenated over datums), whose target token is not the next input token; rlvr scores only next input tokens, so set target_tokens[i] = model_input[i+1] there or give that position zero weight/advantage`);
  }
  return res;
}

/**
 * Run `forward` (no gradient) or `forward_backward` (gradients accumulate in the engine until
 * optim_step) for one request.
 * @throws UserError for bad input (missing or misaligned loss inputs, unknown loss, a loss that
 *         reads an unscorable position).
 */
export async function runForwardBackward(engine: Engine, req: ProtoForwardBackwardRequest): Promise<ForwardResult> {
  const p = prepare(req, engine.info().vocabSize);
  if (req.forwardOnly) {
    const scores = await engine.score(p.batch, { model: "policy" });
    const target = gatherTargets(p, scores.logprobs);
    const res = evaluate(req, p, target);
    return result(p, target, res.elementwise, res.loss);
  }
  let captured: { target: Float64Array; elementwise: Float64Array; loss: number } | null = null;
  await engine.forwardBackward(p.batch, (scores, batch) => {
    const target = gatherTargets(p, scores.logprobs);
    const res = evaluate(req, p, target);
    const d = new Float32Array(batch.batchSize * batch.seqLen);
    const T = batch.seqLen;
    let o = 0;
    p.scorable.forEach((row, b) =>
      row.forEach((ok, i) => {
        const g = res.grad[o++]!;
        if (ok) d[b * T + i + 1] = g;
      }),
    );
    captured = { target, elementwise: res.elementwise, loss: res.loss };
    return { loss: res.loss, dLogprobs: d, metrics: {} };
  });
  const c = captured as { target: Float64Array; elementwise: Float64Array; loss: number } | null;
  if (!c) throw new Error("forward_backward: the engine did not call the loss");
  return result(p, c.target, c.elementwise, c.loss);
}

function result(p: Prepared, target: Float64Array, elementwise: Float64Array, loss: number): ForwardResult {
  const lps = split(p, target);
  const els = split(p, elementwise);
  return { outputs: lps.map((logprobs, i) => ({ logprobs, elementwise_loss: els[i]! })), metrics: { "loss:sum": loss } };
}
