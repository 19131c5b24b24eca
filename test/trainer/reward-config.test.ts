/**
 * A custom JSONL dataset trains end to end through train() with each built-in verifier picked in
 * YAML (reward: {verifier: <name>}) and with a user module, and every component's score reaches
 * the step's metrics as reward/<name>.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseRunConfig } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";

const root = mkdtempSync(join(tmpdir(), "rlvr-reward-cfg-"));
after(() => rmSync(root, { recursive: true, force: true }));
const userModule = fileURLToPath(new URL("./fixtures/ends-with-reward.ts", import.meta.url));

type Row = { prompt: string; answer: string; meta?: Record<string, unknown> };
/** 12 rows of a verifier's data: digits in, the first digit (or a label) out. */
function rows(kind: string): Row[] {
  return Array.from({ length: 12 }, (_, i): Row => {
    const a = i % 10;
    const b = (i * 7 + 3) % 10;
    switch (kind) {
      case "choice":
        return { prompt: `${a},${b}>`, answer: a > b ? "A" : "B", meta: { labels: ["A", "B"] } };
      case "math":
        return { prompt: `${a}+${b}=`, answer: String(a + b) };
      case "ifeval":
        return { prompt: `${a},${b}>`, answer: "-", meta: { constraints: [{ type: "no_commas" }] } };
      case "code":
        return { prompt: `${a}>`, answer: "-", meta: { tests: [{ input: "", output: String(a) }], language: "python" } };
      default:
        return { prompt: `${a},${b}>`, answer: String(Math.max(a, b)) };
    }
  });
}

function dataset(kind: string): { train: string; test: string } {
  const all = rows(kind).map((r) => JSON.stringify(r));
  const train = join(root, `${kind}-train.jsonl`);
  const test = join(root, `${kind}-test.jsonl`);
  writeFileSync(train, all.slice(0, 10).join("\n") + "\n");
  writeFileSync(test, all.slice(10).join("\n") + "\n");
  return { train, test };
}

const CASES: { kind: string; reward: Record<string, unknown>; component: string; pool?: boolean }[] = [
  { kind: "exact", reward: { verifier: "exact" }, component: "exact" },
  { kind: "f1", reward: { verifier: "f1", options: { threshold: 0.5 } }, component: "f1" },
  { kind: "choice", reward: { verifier: "choice" }, component: "choice" },
  { kind: "math", reward: { verifier: "math" }, component: "math" },
  { kind: "format", reward: { verifier: "format", options: { template: "<{answer}>" } }, component: "format" },
  { kind: "ifeval", reward: { verifier: "ifeval" }, component: "ifeval" },
  { kind: "code", reward: { verifier: "code", options: { timeoutMs: 5000 } }, component: "code" },
  { kind: "module", reward: { components: [{ name: "ends", module: userModule, export: "score" }, { verifier: "exact", weight: 0.5 }], shaping: [{ type: "overlong", buffer: 1 }] }, component: "ends" },
  // The same user module scored in the verifier pool's worker threads (they import it themselves).
  { kind: "module", reward: { components: [{ name: "ends_pool", module: userModule, export: "score" }] }, component: "ends_pool", pool: true },
];

const results = new Map<string, Record<string, number>[]>();

for (const c of CASES) {
  test(`custom JSONL task trains 2 RL steps with reward ${JSON.stringify(c.reward).replace(userModule, "<module>")}${c.pool ? " in the verifier pool" : ""}`, { timeout: 180_000 }, async () => {
    const out = join(root, `run-${c.component}`);
    const cfg = parseRunConfig({
      seed: 2,
      out,
      model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
      tokenizer: { type: "char", alphabet: "0123456789,>+=<AB" },
      data: { ...dataset(c.kind), testSize: 2 },
      reward: c.reward,
      rl: { steps: 2, promptsPerStep: 2, groupSize: 2, maxNewTokens: 2, lr: 1e-3, ...(c.pool ? { verifierPool: { enabled: true, size: 1 } } : {}) },
      eval: { maxNewTokens: 2 },
    });
    const s = await train(cfg, { quiet: true });
    const rl = readFileSync(join(out, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((l) => l.stage === "rl");
    assert.equal(rl.length, 2);
    for (const row of rl) {
      for (const k of ["reward/mean", "accuracy", "loss/policy", "grad_norm"]) assert.ok(Number.isFinite(row[k]), `${c.kind}: ${k} = ${row[k]}`);
      for (const k of ["verifier/errors", "verifier/timeouts", "verifier/crashes"]) assert.equal(row[k] ?? 0, 0, `${c.kind}: ${k}`);
    }
    assert.ok(Number.isFinite(s.evals["rl"]!.accuracy));
    results.set(c.component, rl);
  });
}

test("each run logged its components as reward/<name>", () => {
  assert.equal(results.size, CASES.length, "every run finished");
  const missing = [...results].filter(([name, rl]) => !rl.every((row) => Number.isFinite(row[`reward/${name}`]))).map(([n]) => n);
  assert.deepEqual(missing, []);
  // The user-module run also logs its second component and its shaping.
  for (const row of results.get("ends")!) for (const k of ["reward/exact", "reward/overlong"]) assert.ok(Number.isFinite(row[k]), k);
});
