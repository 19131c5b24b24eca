/**
 * `npm run bench -- real`: the real-model recipe's GRPO step (SmolLM2-135M-Instruct, word problems
 * in its chat template, 8 prompts × 4 samples, ≤ 48 new tokens, lr 1e-5, no KL, one update a step)
 * on rlvr's torch engine — full fine-tune, full fine-tune with the low-memory options, LoRA, full
 * fine-tune with colocated vLLM rollouts — and on TRL's GRPOTrainer (full and LoRA), in one run on
 * this machine. Prints seconds per step (median after warm-up), the sampling and training parts,
 * the peak resident memory of the process that holds the model, and each rlvr row ÷ TRL's.
 *
 *   npm run bench -- real [--steps N] [--warmup N] [--only name,name] [--no-trl]
 *
 * Needs `rlvr setup model smollm2-135m-instruct`, python/.venv (rlvr setup torch --lora),
 * python/.venv-vllm for the vLLM row (rlvr setup vllm) and python/.venv-bench with TRL for the
 * baseline: python3 -m venv python/.venv-bench && python/.venv-bench/bin/pip install torch==2.13.0 transformers trl datasets peft
 * A benchmark, not a test: every number comes from this run.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { defaultModelDir } from "../src/engines/catalog.ts";
import { realRecipeConfig } from "../src/recipes/real.ts";
import { generateExamples, wordProblemsTask, writeExamplesJsonl } from "../src/tasks/index.ts";
import { train } from "../src/trainer/run.ts";
import { parseRunConfig } from "../src/config/schema.ts";
import type { RunConfigInput } from "../src/config/schema.ts";

const args = process.argv.slice(2).filter((a) => a !== "real");
const arg = (name: string, dflt: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const STEPS = arg("steps", 4);
const WARMUP = arg("warmup", 1);
const only = (() => {
  const i = args.indexOf("--only");
  return i >= 0 ? new Set(args[i + 1]!.split(",")) : null;
})();
const LORA = { rank: 16, alpha: 32 };
const ROOT = resolve(import.meta.dirname, "..");
const MODEL = defaultModelDir("smollm2-135m-instruct");

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2 : NaN;
};

/** Peak resident memory (GB) of the processes below `root` (or `root` itself), polled every 200 ms: the sum of each process's own peak (VmHWM). */
function memoryWatch(root: number, includeRoot: boolean): { stop: () => number } {
  const peaks = new Map<number, number>();
  const poll = () => {
    const parent = new Map<number, number>();
    for (const d of readdirSync("/proc")) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const stat = readFileSync(`/proc/${d}/stat`, "utf8");
        parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      } catch {
        /* gone */
      }
    }
    const under = (pid: number): boolean => {
      for (let p = parent.get(pid), hops = 0; p !== undefined && hops < 64; p = parent.get(p), hops++) if (p === root) return true;
      return false;
    };
    for (const pid of parent.keys()) {
      if (!(under(pid) || (includeRoot && pid === root))) continue;
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
        if (m) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, Number(m[1]) / 1e6));
      } catch {
        /* gone */
      }
    }
  };
  const timer = setInterval(poll, 200);
  return {
    stop: () => {
      clearInterval(timer);
      let sum = 0;
      for (const v of peaks.values()) sum += v;
      return sum;
    },
  };
}

interface Row {
  step: number;
  sample?: number;
  train?: number;
  peakGB: number;
  note?: string;
}

async function rlvrRow(name: string, dir: string, trainFile: string, testFile: string, change: (c: RunConfigInput) => RunConfigInput): Promise<Row> {
  const base = realRecipeConfig({ out: join(dir, name), modelPath: MODEL, steps: STEPS + WARMUP, seed: 1 }, trainFile, testFile);
  // The held-out evaluations before and after (train() always runs them) kept to 4 prompts × 1 sample.
  const cfg = change({ ...base, data: { ...base.data, testSize: 4 }, eval: { ...base.eval, every: 0, samples: 1, greedy: false } } as RunConfigInput);
  const steps: Record<string, number>[] = [];
  const watch = memoryWatch(process.pid, false);
  await train(parseRunConfig(cfg), { quiet: true, onEvent: (e) => {
    if (e.type !== "metrics" || e.stage !== "rl") return;
    steps.push(e.metrics);
    process.stderr.write(`  ${name} step ${steps.length}/${STEPS + WARMUP}: ${e.metrics["time/step"]!.toFixed(1)} s\n`);
  } });
  const m = steps.slice(WARMUP);
  return { step: median(m.map((r) => r["time/step"]!)), sample: median(m.map((r) => r["time/sample"]!)), train: median(m.map((r) => r["time/train"]! + (r["time/rescore"] ?? 0))), peakGB: watch.stop() };
}

function trlRow(dir: string, trainFile: string, loraRank: number): Promise<Row | string> {
  const py = join(ROOT, "python", ".venv-bench", "bin", "python");
  if (!existsSync(py)) return Promise.resolve(`no ${py} (see the header of bench/real.ts)`);
  const argv = [join(ROOT, "python", "bench", "trl_grpo_real.py"), "--model", MODEL, "--data", trainFile, "--out", join(dir, `trl-${loraRank}`), "--steps", String(STEPS + WARMUP), "--lora-rank", String(loraRank), "--lora-alpha", String(LORA.alpha)];
  // Same OpenMP policy as the torch engine's worker (src/engines/torch/worker.ts), for a fair comparison.
  const child = spawn(py, argv, { env: { OMP_WAIT_POLICY: "PASSIVE", ...process.env }, stdio: ["ignore", "pipe", "pipe"] });
  const watch = memoryWatch(child.pid!, true);
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  return new Promise((res) => {
    child.on("close", (code) => {
      const peakGB = watch.stop();
      const line = out.trim().split("\n").filter((l) => l.startsWith("{")).pop();
      if (code !== 0 || !line) return res(`TRL exited ${code}: ${err.split("\n").slice(-8).join(" | ")}`);
      const o = JSON.parse(line) as { step_seconds: number[]; generate_seconds?: number[]; trl: string };
      const steps = o.step_seconds.slice(WARMUP);
      const gen = o.generate_seconds?.slice(WARMUP);
      const split = gen && gen.length === steps.length ? { sample: median(gen), train: median(steps.map((s, i) => s - gen[i]!)) } : {};
      res({ step: median(steps), ...split, peakGB, note: `TRL ${o.trl}` });
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), "rlvr-bench-real-"));
try {
  if (!existsSync(join(MODEL, "config.json"))) {
    console.log("bench real: the model is not imported; run `rlvr setup model smollm2-135m-instruct` first");
    process.exit(1);
  }
  const trainFile = join(dir, "train.jsonl");
  const testFile = join(dir, "test.jsonl");
  writeExamplesJsonl(trainFile, generateExamples(wordProblemsTask, { n: 400, difficulty: 1, seed: 1, split: "train" }));
  writeExamplesJsonl(testFile, generateExamples(wordProblemsTask, { n: 16, difficulty: 1, seed: 1, split: "test" }));
  console.log(`# Real-model GRPO step: SmolLM2-135M-Instruct, word problems (chat template), 8 prompts × 4 samples, ≤ 48 new tokens, CPU; median of ${STEPS} steps after ${WARMUP} warm-up`);
  const rows: [string, Row | string][] = [];
  const want = (k: string) => !only || only.has(k);
  const lora = (c: RunConfigInput) => ({ ...c, model: { ...c.model, lora: LORA } }) as RunConfigInput;
  const plan: [string, string, () => Promise<Row | string>][] = [
    ["full", "rlvr full fine-tune", () => rlvrRow("full", dir, trainFile, testFile, (c) => c)],
    ["full-lowmem", "rlvr full, gradientCheckpointing", () => rlvrRow("full-lowmem", dir, trainFile, testFile, (c) => ({ ...c, model: { ...c.model, gradientCheckpointing: true } }) as RunConfigInput)],
    ["full-unshared", "rlvr full, sharedPrompts off", () => rlvrRow("full-unshared", dir, trainFile, testFile, (c) => ({ ...c, model: { ...c.model, sharedPrompts: false } }) as RunConfigInput)],
    ["full-vllm", "rlvr full + vLLM rollouts (colocated)", () => rlvrRow("full-vllm", dir, trainFile, testFile, (c) => ({ ...c, rollout: { engine: "vllm", mode: "colocated" } }) as RunConfigInput)],
    ["lora", `rlvr LoRA r${LORA.rank}`, () => rlvrRow("lora", dir, trainFile, testFile, lora)],
    ["trl-full", "TRL GRPOTrainer full fine-tune", () => trlRow(dir, trainFile, 0)],
    ["trl-lora", `TRL GRPOTrainer LoRA r${LORA.rank}`, () => trlRow(dir, trainFile, LORA.rank)],
  ];
  for (const [key, label, run] of plan) {
    if (!want(key) || (key.startsWith("trl") && args.includes("--no-trl"))) continue;
    process.stderr.write(`${label} …\n`);
    try {
      rows.push([label, await run()]);
    } catch (e) {
      rows.push([label, (e instanceof Error ? e.message : String(e)).split("\n")[0]!]);
    }
  }
  const trl = (lbl: string) => rows.find(([k]) => k.startsWith(lbl))?.[1];
  console.log("");
  console.log("| run | s/step | sample s | train s | peak GB | ÷ TRL (same mode) |");
  console.log("|---|---|---|---|---|---|");
  const f = (x?: number, d = 1) => (x === undefined || !Number.isFinite(x) ? "—" : x.toFixed(d));
  for (const [k, v] of rows) {
    if (typeof v === "string") {
      console.log(`| ${k} | failed: ${v} | | | | |`);
      continue;
    }
    const ref = trl(k.includes("LoRA") ? "TRL GRPOTrainer LoRA" : "TRL GRPOTrainer full");
    const ratio = !k.startsWith("TRL") && ref && typeof ref !== "string" ? `${(v.step / ref.step).toFixed(2)}×` : "—";
    console.log(`| ${k}${v.note ? ` (${v.note})` : ""} | ${f(v.step)} | ${f(v.sample)} | ${f(v.train)} | ${f(v.peakGB, 2)} | ${ratio} |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
