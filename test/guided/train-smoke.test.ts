// Every guided and label-free method runs through train() (the path `rlvr train` takes) for a few
// steps on a tiny model and logs its metrics; conflicting configs fail naming the field.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunConfig, type RunConfigInput } from "../../src/config/schema.ts";
import { train } from "../../src/trainer/run.ts";

let root = "";
let teacher = "";

function cfg(name: string, over: Partial<RunConfigInput>): RunConfigInput {
  return {
    seed: 2,
    out: join(root, name),
    model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 16 } },
    tokenizer: { type: "char", alphabet: "0123456789+=,>?-*" },
    data: { task: "addition", difficulty: 1, trainSize: 64, testSize: 8 },
    sft: { steps: 2, batchSize: 16, lr: 0.01 },
    rl: { steps: 2, promptsPerStep: 4, groupSize: 4, maxNewTokens: 3, lr: 1e-3, algorithm: { preset: "grpo", kl: { coef: 0 } } },
    eval: { maxNewTokens: 3 },
    ...over,
  };
}

async function rlMetrics(name: string, over: Partial<RunConfigInput>): Promise<Record<string, unknown>[]> {
  const c = parseRunConfig(cfg(name, over));
  await train(c, { quiet: true });
  return readFileSync(join(root, name, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
}

describe("guided and label-free methods through train()", { timeout: 240_000 }, () => {
  before(async () => {
    root = mkdtempSync(join(tmpdir(), "rlvr-guided-"));
    const s = await train(parseRunConfig(cfg("teacher", { rl: undefined, sft: { steps: 3, batchSize: 16, lr: 0.01 } })), { quiet: true });
    teacher = s.checkpoint;
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("TTRL + EAR", async () => {
    const m = (await rlMetrics("ttrl", { labelfree: { ttrl: { trainOn: 2 }, ear: { alpha: 1 } } })).filter((r) => r["stage"] === "rl");
    assert.equal(m.length, 2);
    for (const k of ["ttrl/label_acc", "ttrl/vote_share", "ttrl/no_label_frac"]) assert.equal(typeof m[0]![k], "number", k);
  });
  it("TTRL on entropy-fork tree rollouts (ETMR + TTRL)", async () => {
    const base = cfg("x", {}).rl!;
    const m = (await rlMetrics("ttrl-tree", { rl: { ...base, tree: { roots: 2 } }, labelfree: { ttrl: {}, ear: {} } })).filter((r) => r["stage"] === "rl");
    assert.equal(m.length, 2);
    assert.equal(typeof m[0]!["ttrl/label_acc"], "number");
  });
  it("EVOL-RL", async () => {
    const m = (await rlMetrics("evol", { labelfree: { evol: {} } })).filter((r) => r["stage"] === "rl");
    assert.equal(typeof m[0]!["evol/reward_mean"], "number");
  });
  it("RAFT keeps the best responses and trains on them (SFT loss, through the normal step)", async () => {
    const m = (await rlMetrics("raft", { guided: { raft: { threshold: 0 } } })).filter((r) => r["stage"] === "rl");
    assert.equal(m.length, 2);
    assert.equal(m[0]!["raft/kept"], 4, "threshold 0 keeps the best of each of 4 prompts");
  });
  it("ReLIFT interleaves SFT steps on the hardest questions", async () => {
    const all = await rlMetrics("relift", { guided: { relift: { hardness: 1, batchSize: 2 } } });
    const m = all.filter((r) => r["stage"] === "rl");
    assert.equal(m[0]!["relift/added"], 4);
    const sft = all.filter((r) => r["stage"] === "relift-sft");
    assert.ok(sft.length >= 1 && sft[0]!["demos"] === 2, "an SFT step on a full batch of 2 demonstrations");
  });
  it("ReLIFT with a teacher engine as the demonstration source", async () => {
    const m = (await rlMetrics("relift-teacher", { guided: { relift: { hardness: 1, batchSize: 2, source: "teacher", teacher } } })).filter((r) => r["stage"] === "rl");
    assert.equal(typeof m[0]!["relift/added"], "number");
  });
  it("LUFFY: expert trajectories join the groups", async () => {
    const m = (await rlMetrics("luffy", { guided: { expert: { mode: "luffy" } } })).filter((r) => r["stage"] === "rl");
    assert.equal(m[0]!["luffy/expert_seqs"], 4);
    assert.ok((m[0]!["luffy/expert_tokens"] as number) > 0);
    assert.equal(m[0]!["groups/trained_seqs"], 20);
  });
  it("CHORD: μ-weighted SFT term with φ", async () => {
    const m = (await rlMetrics("chord", { guided: { expert: { mode: "chord", batchSize: 4, mu: { start: 0.5, end: 0.1 } } } })).filter((r) => r["stage"] === "rl");
    assert.equal(m[0]!["chord/mu"], 0.5);
    assert.ok((m[1]!["chord/mu"] as number) < 0.5);
  });
  it("KDRL: teacher in the reference slot, reverse-KL term in the loss", async () => {
    const m = (await rlMetrics("kd", { guided: { kd: { teacher, coef: 0.1 } } })).filter((r) => r["stage"] === "rl");
    assert.equal(typeof m[0]!["kd/kl"], "number", "KL to the teacher is measured");
    assert.ok((m[0]!["kd/loss"] as number) > 0);
    // Refused when the config is read, before anything runs.
    assert.throws(() => parseRunConfig(cfg("kd-bad", { rl: { ...cfg("x", {}).rl!, algorithm: "grpo" }, guided: { kd: { teacher } } })), /rl\.algorithm\.kl\.coef/);
  });
  it("self-play: proposer + runner + solver", async () => {
    const m = (await rlMetrics("selfplay", { sft: undefined, labelfree: { selfPlay: { kind: "arithmetic", proposals: 8, solverGroup: 4, seedSteps: 2, maxItems: 3 } } })).filter((r) => r["stage"] === "rl");
    assert.equal(m.length, 2);
    for (const k of ["selfplay/valid_frac", "selfplay/solve_rate", "selfplay/learnability"]) assert.equal(typeof m[0]![k], "number", k);
  });
  it("config: RAFT with expert mixing is an error naming the field", () => {
    assert.throws(() => parseRunConfig(cfg("bad", { guided: { raft: {}, expert: { mode: "luffy" } } })), /guided\.raft/);
    assert.throws(() => parseRunConfig(cfg("bad", { guided: { relift: { source: "teacher" } } })), /guided\.relift\.teacher/);
  });
});
