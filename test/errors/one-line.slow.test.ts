/**
 * Every user error of every command is one line on stderr that says what is wrong and where, with
 * no stack trace; RLVR_DEBUG=1 adds the stack. Each case runs the real CLI (bin/rlvr.js on the
 * current sources) on a bad input and checks its stderr.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import { CharTokenizer } from "../../src/tokenizers/index.ts";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const root = mkdtempSync(join(tmpdir(), "rlvr-one-line-"));
const ckpt = join(root, "ckpt");

interface Result {
  code: number | null;
  stderr: string;
}

/** `rlvr <args>` from the current sources, in `root`. */
function rlvr(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(repo, "bin", "rlvr.js"), ...args], {
      cwd: root,
      env: { ...process.env, RLVR_FROM_SOURCE: "1", RLVR_THREADS: "1", RLVR_DEBUG: "", ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

/** A run config (tiny model, addition) with `over` merged into its blocks (`replace`: blocks taken whole from `over`). */
function cfg(name: string, over: Record<string, Record<string, unknown> | string> = {}, replace: string[] = []): string {
  const c: Record<string, unknown> = {
    out: join(root, "runs", name),
    model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 32 } },
    tokenizer: { type: "char", alphabet: "0123456789+=" },
    data: { task: "addition", difficulty: 1, trainSize: 16, testSize: 4 },
    rl: { steps: 1, promptsPerStep: 2, groupSize: 2, maxNewTokens: 3 },
  };
  for (const [k, v] of Object.entries(over)) c[k] = typeof v === "object" && typeof c[k] === "object" && !replace.includes(k) ? { ...(c[k] as object), ...v } : v;
  const file = join(root, `${name}.yaml`);
  writeFileSync(file, stringify(c));
  return file;
}

before(async () => {
  const tokenizer = new CharTokenizer({ alphabet: "0123456789+=" });
  const engine = await EmbeddedEngine.create(
    { modelType: "llama", vocabSize: tokenizer.vocabSize, hiddenSize: 16, intermediateSize: 32, numLayers: 1, numHeads: 2, numKvHeads: 2, headDim: 8, rmsNormEps: 1e-5, ropeTheta: 10000, maxPositionEmbeddings: 32, tieWordEmbeddings: true, attentionBias: false, bosTokenId: tokenizer.bosId, eosTokenId: tokenizer.eosId },
    { seed: 1, tokenizer, modelId: "tiny" },
  );
  await engine.save(ckpt);
  await engine.close();
  // A checkpoint whose weights file is cut short, and one whose tokenizer.json is not JSON.
  cpSync(ckpt, join(root, "bad-weights"), { recursive: true });
  writeFileSync(join(root, "bad-weights", "model.safetensors"), Buffer.from([0x10, 0, 0, 0, 0, 0, 0, 0, 0x7b]));
  cpSync(ckpt, join(root, "bad-tokenizer"), { recursive: true });
  writeFileSync(join(root, "bad-tokenizer", "tokenizer.json"), '{"model": {"vocab": {"<pad>": 0,');
  writeFileSync(join(root, "bad-row.jsonl"), '{"prompt":"1+1=","answer":"2"}\n{"prompt":"2+2="}\n');
  writeFileSync(join(root, "tabs.yaml"), "seed: 1\nmodel:\n\tinit: {}\n");
  mkdirSync(join(root, "runs", "fresh"), { recursive: true });
  cpSync(cfg("fresh"), join(root, "runs", "fresh", "config.yaml"));
  // A run whose eval.jsonl is the full device: the first evaluation's write fails with ENOSPC.
  mkdirSync(join(root, "runs", "full"), { recursive: true });
  symlinkSync("/dev/full", join(root, "runs", "full", "eval.jsonl"));
});
after(() => rmSync(root, { recursive: true, force: true }));

/** One error path: the command and what its single line must say. */
const cases: { name: string; args: () => string[]; says: RegExp }[] = [
  { name: "missing config file", args: () => ["train", join(root, "nope.yaml")], says: /^cannot read config .*nope\.yaml: ENOENT/ },
  { name: "bad YAML", args: () => ["train", join(root, "tabs.yaml")], says: /^config error in .*tabs\.yaml line 3: invalid YAML/ },
  { name: "unknown task (train)", args: () => ["train", cfg("unknown-task", { data: { task: "no-such-task" } })], says: /unknown task "no-such-task"; known tasks: / },
  { name: "unknown task (data gen)", args: () => ["data", "gen", "no-such-task", "--n", "2"], says: /^error: unknown task "no-such-task"; known tasks: / },
  { name: "difficulty out of range (data gen)", args: () => ["data", "gen", "addition", "--n", "2", "--difficulty", "99"], says: /^error: task addition: difficulty must be an integer in \[1, 18\], got 99$/ },
  { name: "difficulty out of range (train)", args: () => ["train", cfg("difficulty", { data: { difficulty: 99 } })], says: /^error: task addition: difficulty must be an integer in \[1, 18\], got 99$/ },
  { name: "heads not dividing hidden", args: () => ["train", cfg("heads", { model: { init: { hiddenSize: 18, numLayers: 1, numHeads: 4, maxPositionEmbeddings: 32 } } })], says: /config error .*model\.init\.hiddenSize: 18 is not divisible by numHeads 4/ },
  { name: "maxNewTokens beyond positions", args: () => ["train", cfg("positions", { rl: { maxNewTokens: 200 } })], says: /^error: prompt \(\d+ tokens, padded to \d+\) \+ maxNewTokens \(200\) exceeds the model's maxPositionEmbeddings 32; lower maxNewTokens to \d+ or less$/ },
  { name: "size bound", args: () => ["train", cfg("bound", { rl: { groupSize: 1e9 } })], says: /^config error in .* at rl\.groupSize: Too big: expected number to be <=4096/ },
  { name: "dataset row (train)", args: () => ["train", cfg("dataset", { data: { train: join(root, "bad-row.jsonl"), test: join(root, "bad-row.jsonl"), verifier: "math" } }, ["data"])], says: /^dataset error at .*bad-row\.jsonl line 2: missing field "answer"/ },
  { name: "dataset file missing (eval --data)", args: () => ["eval", ckpt, "--data", join(root, "none.jsonl"), "--verifier", "math"], says: /^dataset error at .*none\.jsonl: file not found/ },
  { name: "safetensors cut short (eval)", args: () => ["eval", join(root, "bad-weights"), "--task", "addition", "--n", "2"], says: /safetensors error in .*bad-weights.*model\.safetensors/ },
  { name: "malformed char tokenizer.json (eval)", args: () => ["eval", join(root, "bad-tokenizer"), "--task", "addition", "--n", "2"], says: /^tokenizer error in .*bad-tokenizer.*tokenizer\.json: not valid JSON/ },
  { name: "dataset file missing (data inspect)", args: () => ["data", "inspect", join(root, "none.jsonl")], says: /^dataset error at .*none\.jsonl: file not found/ },
  { name: "input file missing (verify)", args: () => ["verify", "math", join(root, "none.jsonl")], says: /^I\/O error at .*none\.jsonl: ENOENT/ },
  { name: "run directory missing (dashboard)", args: () => ["dashboard", join(root, "nowhere"), "--port", "0"], says: /^error: dashboard: .*nowhere is not a directory$/ },
  { name: "bad option (eval --samples 0)", args: () => ["eval", ckpt, "--task", "addition", "--samples", "0"], says: /^error: rlvr eval: --samples must be an integer >= 1, got 0$/ },
  { name: "no checkpoint (eval)", args: () => ["eval", join(root, "nowhere"), "--task", "addition"], says: /no checkpoint at .*nowhere/ },
  { name: "resume without a config", args: () => ["train", "--resume", join(root, "runs")], says: /^cannot read config .*runs\/config\.yaml: ENOENT/ },
  { name: "resume without checkpoints", args: () => ["train", "--resume", join(root, "runs", "fresh")], says: /checkpoint/ },
  {
    name: "disk full (ENOSPC) while writing the run",
    args: () => ["train", cfg("full", { out: join(root, "runs", "full"), sft: { steps: 2, batchSize: 4 }, checkpoint: { every: 1 } })],
    says: /^I\/O error at .*runs\/full: ENOSPC \(no space left on the device\); the newest complete checkpoint is .*runs\/full\/checkpoints\/step-2 \(rlvr train --resume .*runs\/full continues from it\)$/,
  },
  { name: "run directory inside a file", args: () => ["train", cfg("notdir", { out: join(root, "bad-row.jsonl", "run") })], says: /^I\/O error at .*bad-row\.jsonl\/run.*ENOTDIR/ },
  { name: "pool module that cannot load", args: () => ["train", cfg("pool", { rl: { verifierPool: { enabled: true, size: 1, modules: [join(root, "no-such-module.ts")] } } })], says: /^config error at rl\.verifierPool\.modules: cannot load verifier module .*no-such-module\.ts/ },
];

/** A single line, with a recognisable prefix, no stack frame, and a failing exit status. */
function assertOneLine(r: Result, says: RegExp): void {
  // Progress lines of rlvr train (stage names, per-step lines) are not errors.
  const text = r.stderr.replace(/^(?:» .*|  (?:sft|rl) \d+\/\d+ .*)\n/gm, "");
  const lines = text.trimEnd().split("\n");
  assert.notEqual(r.code, 0, "exits with a failure status");
  assert.equal(lines.length, 1, `one line, got:\n${r.stderr}`);
  assert.match(lines[0]!, /^(error: |[A-Za-z][\w-]*(?: [\w-]+){0,2} error\b|cannot |I\/O error)/, "starts with a recognisable prefix");
  assert.doesNotMatch(r.stderr, /^\s+at /m, "no stack frames");
  assert.match(lines[0]!, says);
}

// Four CLI processes at a time (each start-up compiles the sources through tsx).
test("every error path prints one clear line without a stack trace", { timeout: 600_000 }, async () => {
  const failures: string[] = [];
  for (let i = 0; i < cases.length; i += 4) {
    const batch = cases.slice(i, i + 4);
    const results = await Promise.all(batch.map((c) => rlvr(c.args())));
    batch.forEach((c, j) => {
      try {
        assertOneLine(results[j]!, c.says);
      } catch (e) {
        failures.push(`${c.name}: ${(e as Error).message}`);
      }
    });
  }
  assert.deepEqual(failures, []);
});

test("RLVR_DEBUG=1 adds the stack trace", { timeout: 120_000 }, async () => {
  const r = await rlvr(["data", "gen", "no-such-task", "--n", "2"], { RLVR_DEBUG: "1" });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /unknown task "no-such-task"/);
  assert.match(r.stderr, /^\s+at /m);
});
