/**
 * RL step time of the torch engine vs the embedded engine vs TRL's GRPOTrainer, in one run, on
 * the same tiny randomly initialised Qwen2-architecture checkpoint and the same GRPO settings
 * (prompts × group, max new tokens, lr, KL 0.001 k3 against a reference model, grad clip 1).
 * Task: reward 1 when the response's first character is "a".
 *
 *   node --import tsx bench/torch.ts [--steps N] [--warmup N] [--no-trl] [--hidden D]
 *
 * Needs python/.venv (rlvr setup torch) for the torch engine and python/.venv-bench with trl for
 * the baseline:  python3 -m venv python/.venv-bench && python/.venv-bench/bin/pip install torch==2.13.0 transformers trl datasets
 * A benchmark, not a test: it prints seconds per step and ratios measured in this run.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { EmbeddedEngine } from "../src/engines/embedded/engine.ts";
import type { ModelConfig } from "../src/engines/embedded/hf-config.ts";
import type { Engine } from "../src/core/engine.ts";
import { TorchEngine } from "../src/engines/torch/engine.ts";
import { CharTokenizer } from "../src/tokenizers/index.ts";
import { parseRunConfig } from "../src/config/schema.ts";
import { initRlState } from "../src/pipeline/state.ts";
import { rlStep } from "../src/pipeline/step.ts";
import { RunLogger } from "../src/pipeline/logger.ts";
import { contextWith, type RunContext } from "../src/pipeline/context.ts";

const args = process.argv.slice(2);
const arg = (name: string, dflt: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const STEPS = arg("steps", 8);
const WARMUP = arg("warmup", 2);
const HIDDEN = arg("hidden", 64);
const PROMPTS = 8;
const GROUP = 8;
const MAX_NEW = 16;
const LR = 3e-3;
const noTrl = args.includes("--no-trl");

const tokenizer = new CharTokenizer({ alphabet: "abcdefgh" });
const model: ModelConfig = {
  modelType: "qwen2",
  vocabSize: tokenizer.vocabSize,
  hiddenSize: HIDDEN,
  intermediateSize: HIDDEN * 3,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: HIDDEN / 4,
  rmsNormEps: 1e-6,
  ropeTheta: 10000,
  maxPositionEmbeddings: 64,
  tieWordEmbeddings: true,
  attentionBias: true,
  bosTokenId: tokenizer.bosId,
  eosTokenId: tokenizer.eosId,
};
const promptTexts = ["abc", "hgf", "bad", "cafe", "dab", "fed", "head", "egg"];

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2 : NaN;
};

async function runEngine(name: string, engine: Engine, dir: string): Promise<{ step: number; sample: number; train: number; acc: number[] }> {
  const cfg = parseRunConfig({
    seed: 1,
    out: join(dir, `run-${name}`),
    model: { init: {} },
    data: { task: "addition" },
    rl: { steps: STEPS + WARMUP, promptsPerStep: PROMPTS, groupSize: GROUP, maxNewTokens: MAX_NEW, lr: LR, temperature: 1, algorithm: "grpo" },
  });
  const examples = promptTexts.map((p, i) => ({ id: `first-a-${i}`, prompt: p, answer: "a", task: "first-a" }));
  const ctx: RunContext = contextWith({
    cfg,
    tokenizer,
    engine,
    train: examples,
    test: examples,
    verify: (r) => ({ correct: r.startsWith("a"), reward: r.startsWith("a") ? 1 : 0, extracted: r.slice(0, 1), reason: "" }),
    encodePrompt: (ex) => Int32Array.from(tokenizer.encode(ex.prompt)),
  });
  const st = initRlState(ctx, cfg.algorithm!);
  await engine.setReference("policy");
  const log = new RunLogger(cfg.out, true);
  const m: Record<string, number>[] = [];
  for (let i = 0; i < STEPS + WARMUP; i++) {
    const r = await rlStep(ctx, cfg.algorithm!, st, log);
    if (i >= WARMUP) m.push(r);
    process.stderr.write(`  ${name} step ${i + 1}/${STEPS + WARMUP}: ${r["time/step"]!.toFixed(3)} s, accuracy ${r["accuracy"]!.toFixed(2)}\n`);
  }
  return {
    step: median(m.map((r) => r["time/step"]!)),
    sample: median(m.map((r) => r["time/sample"]!)),
    train: median(m.map((r) => r["time/train"]!)),
    acc: m.map((r) => r["accuracy"]!),
  };
}

const dir = mkdtempSync(join(tmpdir(), "rlvr-bench-torch-"));
try {
  const ckpt = join(dir, "tiny-qwen2");
  const init = await EmbeddedEngine.create(model, { seed: 1, tokenizer });
  await init.save(ckpt);
  await init.close();
  console.log(`# Torch engine benchmark: GRPO step time, ${PROMPTS} prompts × ${GROUP} samples, ≤${MAX_NEW} new tokens, Qwen2 ${HIDDEN}×2 (vocab ${tokenizer.vocabSize}), median of ${STEPS} steps after ${WARMUP} warm-up`);

  const results: Record<string, { step: number; sample?: number; train?: number }> = {};
  const emb = await EmbeddedEngine.fromPretrained(ckpt, { tokenizer });
  results["embedded"] = await runEngine("embedded", emb, dir);
  await emb.close();

  const probe = TorchEngine.probe();
  if (probe.ok) {
    const tor = await TorchEngine.fromPretrained(ckpt, { tokenizer, device: "cpu", onStderr: () => {} });
    results["torch"] = await runEngine("torch", tor, dir);
    await tor.close();
  } else console.log(`torch engine skipped: ${probe.reason}`);

  const benchPy = resolve(import.meta.dirname, "..", "python", ".venv-bench", "bin", "python");
  if (!noTrl && existsSync(benchPy)) {
    process.stderr.write("  TRL GRPOTrainer …\n");
    const r = spawnSync(
      benchPy,
      [
        resolve(import.meta.dirname, "..", "python", "bench", "trl_grpo.py"),
        "--model", ckpt,
        "--out", join(dir, "trl"),
        "--prompts", JSON.stringify(promptTexts.map((p) => tokenizer.decode([tokenizer.bosId!], { skipSpecial: false }) + p)),
        "--prompts-per-step", String(PROMPTS),
        "--group", String(GROUP),
        "--max-new", String(MAX_NEW),
        "--steps", String(STEPS + WARMUP),
        "--lr", String(LR),
      ],
      // Same OpenMP policy as the torch engine's worker (src/engines/torch/worker.ts), for a fair comparison.
      { encoding: "utf8", maxBuffer: 64 << 20, env: { OMP_WAIT_POLICY: "PASSIVE", ...process.env } },
    );
    const line = r.stdout.trim().split("\n").filter((l) => l.startsWith("{")).pop();
    if (r.status === 0 && line) {
      const o = JSON.parse(line) as { step_seconds: number[]; trl: string };
      results[`TRL ${o.trl} GRPOTrainer`] = { step: median(o.step_seconds.slice(WARMUP)) };
    } else console.log(`TRL baseline failed (exit ${r.status}):\n${r.stderr.split("\n").slice(-15).join("\n")}`);
  } else if (!noTrl) console.log(`TRL baseline skipped: no ${benchPy} (see the header of bench/torch.ts)`);

  const base = results["torch"]?.step;
  console.log("");
  console.log("| engine | s/step (median) | sample s | train s | step time ÷ torch engine |");
  console.log("|---|---|---|---|---|");
  for (const [k, v] of Object.entries(results)) {
    const f = (x?: number) => (x === undefined ? "—" : x.toFixed(3));
    console.log(`| ${k} | ${f(v.step)} | ${f(v.sample)} | ${f(v.train)} | ${base ? (v.step / base).toFixed(2) + "×" : "—"} |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
