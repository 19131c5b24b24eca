/**
 * `npm run bench`: speed of the embedded engine on the quickstart model, on this machine.
 *   - sampling tokens/s (KV cache, 256 sequences × maxNewTokens),
 *   - training tokens/s (forwardBackward + optimStep on 256 sequences),
 *   - RL step time (sample + reward + train, the quickstart's GRPO step),
 * each measured with jax-js on 1 thread (the baseline) and on all cores, in separate processes
 * (the thread count is fixed when jax-js loads), and printed with the ratio to the baseline.
 */
import { spawnSync } from "node:child_process";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";

const child = process.env.RLVR_BENCH_CHILD === "1";
if (!child && process.argv[2] === "async") {
  // `npm run bench -- async`: rl.async vs the synchronous RL step (bench/async.ts).
  await import("./async.ts");
  process.exit(0);
}
if (!child && process.argv[2] === "compare") {
  // `npm run bench -- compare`: embedded vs torch engine by model size and threads (bench/compare.ts).
  process.argv.splice(2, 1);
  await import("./compare.ts");
  process.exit(0);
}
if (!child && process.argv[2] === "scale-vllm") {
  // `npm run bench -- scale-vllm`: HF generate vs vLLM tokens/s, weight-sync seconds (bench/scale-vllm.ts).
  await import("./scale-vllm.ts");
  process.exit(0);
}
if (!child && process.argv[2] === "scale") {
  // `npm run bench -- scale`: training step time 1 process vs 2 ranks, then the vLLM half (bench/scale.ts).
  await import("./scale.ts");
  process.exit(0);
}
if (!child && process.argv[2] === "serve") {
  // `npm run bench -- serve`: rlvr serve under 200 concurrent requests, batched vs not (bench/serve.ts).
  await import("./serve.ts");
  process.exit(0);
}
if (!child && process.argv[2] === "real") {
  // `npm run bench -- real`: the real-model GRPO step, rlvr's torch engine (full, LoRA, vLLM) vs TRL (bench/real.ts).
  await import("./real.ts");
  process.exit(0);
}
if (!child && process.argv[2] === "torch") {
  // `npm run bench -- torch`: torch engine vs embedded engine vs TRL (bench/torch.ts).
  await import("./torch.ts");
  process.exit(0);
}

async function measure(): Promise<Record<string, number>> {
  const { parseRunConfig } = await import("../src/config/schema.ts");
  const { quickstartConfig } = await import("../src/recipes/quickstart.ts");
  const { buildContext } = await import("../src/trainer/context.ts");
  const { initRlState } = await import("../src/pipeline/state.ts");
  const { rlStep } = await import("../src/pipeline/step.ts");
  const { RunLogger } = await import("../src/pipeline/logger.ts");
  const { packSequences } = await import("../src/core/sequence.ts");
  const { makeSftLoss, stepCounts } = await import("../src/algorithms/index.ts");
  const { mkdtempSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dir = mkdtempSync(join(tmpdir(), "rlvr-bench-"));
  const base = quickstartConfig({ out: dir, digits: 2, sftSteps: 0, rlSteps: 3, seed: 1 }, "", "");
  const cfg = parseRunConfig({ ...base, data: { task: "addition-padded", difficulty: 2, trainSize: 2000, testSize: 64 } });
  const ctx = await buildContext(cfg);
  const prompts = ctx.train.slice(0, 32).map(ctx.encodePrompt);
  const time = async (f: () => Promise<unknown>, reps: number) => {
    await f(); // warm-up (jit compilation)
    const t = performance.now();
    for (let i = 0; i < reps; i++) await f();
    return (performance.now() - t) / 1000 / reps;
  };
  let sampled = 0;
  const sampleS = await time(async () => {
    const r = await ctx.engine.sample({ prompts, n: 8, maxNewTokens: 4, temperature: 1, seed: 1, stopTokens: [] });
    sampled = r.reduce((a, x) => a + x.tokens.length, 0);
  }, 3);
  const seqs = ctx.train.slice(0, 256).map((ex) => ({ prompt: ctx.encodePrompt(ex), response: [...ctx.tokenizer.encode(ex.answer, { addSpecialTokens: false }), ctx.tokenizer.eosId] }));
  const batch = packSequences(seqs, ctx.tokenizer.padId);
  const counts = stepCounts([batch], 4);
  const trainS = await time(async () => {
    await ctx.engine.forwardBackward(batch, makeSftLoss(counts));
    await ctx.engine.optimStep({ lr: 1e-4 });
  }, 3);
  const log = new RunLogger(dir, true);
  const st = initRlState(ctx, cfg.algorithm!);
  await ctx.engine.setReference("policy");
  const rlS = await time(() => rlStep(ctx, cfg.algorithm!, st, log), 3);
  return {
    sample_tokens_per_s: sampled / sampleS,
    train_tokens_per_s: (batch.batchSize * batch.seqLen) / trainS,
    rl_step_s: rlS,
    params: ctx.engine.info().numParams,
  };
}

if (child) {
  process.stdout.write(JSON.stringify(await measure()) + "\n");
} else {
  const run = (threads: string) => {
    const r = spawnSync(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url)], {
      env: { ...process.env, RLVR_BENCH_CHILD: "1", RLVR_THREADS: threads },
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(`bench child (threads=${threads}) failed:\n${r.stderr}`);
    return JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<string, number>;
  };
  const cores = cpus().length;
  process.stdout.write(`rlvr bench — embedded engine, quickstart model; machine: ${cores} cores (${cpus()[0]?.model ?? "?"}), Node ${process.version}\n`);
  const one = run("1");
  const all = run(String(cores));
  process.stdout.write(`model parameters: ${one["params"]}\n\n`);
  process.stdout.write(`| metric | 1 thread (baseline) | ${cores} threads | ratio |\n|---|---|---|---|\n`);
  for (const k of ["sample_tokens_per_s", "train_tokens_per_s", "rl_step_s"]) {
    const ratio = k === "rl_step_s" ? one[k]! / all[k]! : all[k]! / one[k]!;
    process.stdout.write(`| ${k} | ${one[k]!.toFixed(k === "rl_step_s" ? 3 : 0)} | ${all[k]!.toFixed(k === "rl_step_s" ? 3 : 0)} | ${ratio.toFixed(2)}× |\n`);
  }
}
