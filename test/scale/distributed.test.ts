/**
 * Data-parallel training of the torch engine under torchrun (model.distributed), on CPU with
 * gloo: one GRPO step (forwardBackward with the TypeScript policy loss + optimStep, two steps in
 * fact, so AdamW's state carries over) on 2 ranks gives the same updated weights as one process
 * for the same global batch, with FSDP2 and with DDP, and across two "nodes" (two torchrun agents
 * on this machine joined by torchrun's static rendezvous); a checkpoint written under 2 ranks
 * reloads in one process with the same weights and optimizer state; scoring and sampling run
 * under 2 ranks.
 *
 * The batches are chosen to reach every path of the worker: micro-batches the token budget
 * splits unevenly between the ranks (FSDP2 ranks must run the same number of forwards), a
 * one-row micro-batch (the other rank runs a dummy row), and the one-graph path; the DDP engine
 * also recomputes activations (gradient checkpointing).
 *
 * Needs python/.venv with torch (rlvr setup torch); without it every test is skipped with the
 * reason printed. `npm run test:scale` runs this folder.
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, readdir } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { hfParamNames, toHfConfig, type ModelConfig } from "../../src/engines/embedded/hf-config.ts";
import { TorchEngine, type TorchEngineOptions } from "../../src/engines/torch/engine.ts";
import { workerLaunch } from "../../src/engines/torch/launch.ts";
import { groupMembers } from "./helpers.ts";
import { resolvePython, WORKER_ROOT } from "../../src/engines/torch/worker.ts";
import type { TokenBatch } from "../../src/core/engine.ts";
import { grpoAdvantages, makePolicyLoss, resolveAlgorithm, stepCounts } from "../../src/algorithms/index.ts";
import { tinyQwen2, randomBatch, randomHfWeights, writeHfCheckpoint, maxAbsDiff, Rng } from "../engines/helpers/tiny.ts";

const probe = TorchEngine.probe();
const SKIP = probe.ok ? false : `distributed torch engine tests skipped: ${probe.reason}`;
if (SKIP) console.log(`# ${SKIP}`);

/** Qwen2 shape (biases, GQA, tied embeddings); vocab 23 shards unevenly over 2 ranks (12 + 11 rows). */
const CFG: ModelConfig = tinyQwen2({ vocabSize: 23, hiddenSize: 16, intermediateSize: 24, numHeads: 4, numKvHeads: 2, headDim: 4 });
const NAMES = hfParamNames(CFG).map((s) => s.name);
const TOL = 1e-5;
const PROMPT = 3;
const MAX_NEW = 6;

const stderrTail: string[] = [];
const base: TorchEngineOptions = {
  device: "cpu",
  threads: 1,
  onStderr: (l) => {
    if (process.env.RLVR_TEST_VERBOSE) process.stderr.write(`[worker] ${l}\n`);
    stderrTail.push(l);
    if (stderrTail.length > 60) stderrTail.shift();
  },
};

let tmp: string;
let ckpt: string;
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), "rlvr-scale-"));
  ckpt = join(tmp, "tiny-qwen2");
  const specs = hfParamNames(CFG);
  await writeHfCheckpoint(ckpt, toHfConfig(CFG), randomHfWeights(specs, new Rng(11), 0.4), new Map(specs.map((s) => [s.name, s.shape])));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/**
 * One optimizer step's micro-batches: groups of 4 responses per prompt with 0/1 rewards, GRPO
 * advantages broadcast over the response tokens. Micro-batch 0 has 7 rows of mixed lengths,
 * micro-batch 1 a single row.
 */
function stepBatches(seed: number): TokenBatch[] {
  const rng = new Rng(seed);
  const lens = [[9, 5, 8, 4, 7, 9, 6], [8]];
  const all = lens.map((l) => randomBatch(rng, CFG.vocabSize, l, { promptLen: PROMPT, extraPad: 1 }));
  let g = 0;
  for (const b of all) {
    const rewards = Float32Array.from({ length: b.batchSize }, (_, i) => (i % 3 === 0 ? 1 : 0));
    const groupIds = Int32Array.from({ length: b.batchSize }, (_, i) => g + Math.floor(i / 4));
    g += Math.ceil(b.batchSize / 4);
    const adv = b.batchSize > 1 ? grpoAdvantages({ rewards, groupIds }) : Float32Array.of(0.5);
    b.groupIds = groupIds;
    b.advantages = new Float32Array(b.batchSize * b.seqLen);
    for (let i = 0; i < b.advantages.length; i++) b.advantages[i] = b.lossMask[i]! * adv[Math.floor(i / b.seqLen)]!;
  }
  return all;
}

const ALG = resolveAlgorithm({ preset: "grpo", kl: { coef: 0 }, entropy: { coef: 0.01 } });

/** Two GRPO updates (old log-probs from score, global step counts, clipping, weight decay); returns grad norms. */
async function grpoSteps(e: TorchEngine): Promise<number[]> {
  const norms: number[] = [];
  for (const seed of [1, 2]) {
    const micro = stepBatches(seed);
    for (const mb of micro) mb.oldLogprobs = (await e.score(mb, { model: "policy" })).logprobs;
    const counts = stepCounts(micro, MAX_NEW);
    const loss = makePolicyLoss(ALG, counts, { klCoef: 0, entropyCoef: 0.01 });
    for (const mb of micro) {
      const rep = await e.forwardBackward(mb, loss, { entropy: true });
      assert.ok(Number.isFinite(rep.loss));
    }
    const o = await e.optimStep({ lr: 2e-2, maxGradNorm: 0.5, weightDecay: 0.01 });
    assert.equal(o.skipped, false);
    norms.push(o.gradNorm);
  }
  return norms;
}

async function weights(e: TorchEngine): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  for (const n of NAMES) out.set(n, await e.getWeight(n));
  return out;
}

function worstDiff(a: Map<string, Float32Array>, b: Map<string, Float32Array>): { name: string; diff: number } {
  let worst = { name: "", diff: -1 };
  for (const [n, x] of a) {
    const d = maxAbsDiff(x, b.get(n)!);
    if (d > worst.diff) worst = { name: n, diff: d };
  }
  return worst;
}

async function open(opts: TorchEngineOptions, dir = ckpt): Promise<TorchEngine> {
  try {
    return await TorchEngine.fromPretrained(dir, { ...base, ...opts });
  } catch (e) {
    throw new Error(`${(e as Error).message}\nworker stderr:\n${stderrTail.join("\n")}`);
  }
}

describe("torch engine under torchrun (2 ranks, gloo, CPU)", { skip: SKIP }, () => {
  let one: TorchEngine;
  let before1: Map<string, Float32Array>;
  let after1: Map<string, Float32Array>;
  let norms1: number[];
  let scores1: { logprobs: Float32Array; entropy?: Float32Array };
  before(async () => {
    one = await open({});
    before1 = await weights(one);
    scores1 = await one.score(stepBatches(3)[0]!, { model: "policy", entropy: true });
    norms1 = await grpoSteps(one);
    after1 = await weights(one);
  });
  after(async () => {
    await one?.close();
  });

  describe("FSDP2", () => {
    let fsdp: TorchEngine;
    before(async () => {
      // A 16-token budget splits micro-batch 0 into 3 forwards on rank 0 (rows of 9, 8, 7+6 tokens)
      // and 2 on rank 1 (9, 5+4): rank 1 adds a dummy forward. Micro-batch 1 (one row) is the
      // one-graph path with a dummy row on rank 1.
      fsdp = await open({ distributed: { nprocPerNode: 2, strategy: "fsdp2" }, tokenBudget: 16 });
    });
    after(async () => {
      await fsdp?.close();
    });

    test("the worker group reports 2 ranks, FSDP2 on gloo", () => {
      assert.equal(fsdp.versions.worldSize, 2);
      assert.equal(fsdp.versions.backend, "gloo");
      assert.match(fsdp.info().device, /x 2 ranks \(fsdp2, gloo\)/);
      assert.equal(fsdp.info().numParams, one.info().numParams);
    });

    test("score (policy, entropy) equals the one-process scores", async () => {
      const b = stepBatches(3)[0]!;
      const s1 = scores1;
      const s2 = await fsdp.score(b, { model: "policy", entropy: true });
      assert.ok(maxAbsDiff(s1.logprobs, s2.logprobs) < TOL, `logprobs differ by ${maxAbsDiff(s1.logprobs, s2.logprobs)}`);
      assert.ok(maxAbsDiff(s1.entropy!, s2.entropy!) < TOL, `entropy differs by ${maxAbsDiff(s1.entropy!, s2.entropy!)}`);
    });

    test("two GRPO steps give the one-process updated weights within 1e-5 (and the same grad norms)", async () => {
      assert.ok(worstDiff(before1, await weights(fsdp)).diff === 0, "both start from the checkpoint");
      const norms2 = await grpoSteps(fsdp);
      const after2 = await weights(fsdp);
      const moved = worstDiff(before1, after1);
      assert.ok(moved.diff > 1e-3, `the step must move the weights (moved ${moved.diff})`);
      const w = worstDiff(after1, after2);
      assert.ok(w.diff < TOL, `FSDP2 weights differ from one process by ${w.diff} at ${w.name}`);
      for (let i = 0; i < norms1.length; i++) assert.ok(Math.abs(norms1[i]! - norms2[i]!) < 1e-4 * (1 + norms1[i]!), `grad norm ${norms2[i]} vs ${norms1[i]}`);
    });

    test("reference = policy snapshot, scored under FSDP2, equals the one-process reference", async () => {
      await fsdp.setReference("policy");
      await one.setReference("policy");
      const b = stepBatches(4)[0]!;
      const r1 = await one.score(b, { model: "reference" });
      const r2 = await fsdp.score(b, { model: "reference" });
      assert.ok(maxAbsDiff(r1.logprobs, r2.logprobs) < TOL);
    });

    test("a checkpoint written under 2 ranks reloads in one process: same weights, and the next step matches", async () => {
      const dir = join(tmp, "fsdp-ckpt");
      await fsdp.save(dir, { optimizer: true });
      const files = await readdir(dir);
      assert.ok(files.includes("config.json") && files.includes("optimizer.safetensors") && files.some((f) => f.endsWith(".safetensors") && f.startsWith("model")), files.join(","));
      const re = await open({}, dir);
      try {
        const w = worstDiff(await weights(fsdp), await weights(re));
        assert.equal(w.diff, 0, `reloaded weights differ by ${w.diff} at ${w.name}`);
        // AdamW state came back too: one more identical step on both stays within tolerance.
        const step = async (e: TorchEngine) => {
          const micro = stepBatches(5);
          for (const mb of micro) mb.oldLogprobs = (await e.score(mb, { model: "policy" })).logprobs;
          const loss = makePolicyLoss(ALG, stepCounts(micro, MAX_NEW), { klCoef: 0, entropyCoef: 0.01 });
          for (const mb of micro) await e.forwardBackward(mb, loss, { entropy: true });
          await e.optimStep({ lr: 2e-2, maxGradNorm: 0.5, weightDecay: 0.01 });
        };
        await step(re);
        await step(fsdp);
        const w2 = worstDiff(await weights(fsdp), await weights(re));
        assert.ok(w2.diff < TOL, `after one more step: ${w2.diff} at ${w2.name}`);
      } finally {
        await re.close();
      }
      // And the 2-rank engine reads a one-process checkpoint (load broadcasts from rank 0).
      const dir1 = join(tmp, "one-ckpt");
      await one.save(dir1, { optimizer: true });
      await fsdp.load(dir1);
      const w3 = worstDiff(await weights(one), await weights(fsdp));
      assert.equal(w3.diff, 0, `load under 2 ranks: ${w3.diff} at ${w3.name}`);
    });

    test("sampling under 2 ranks: prompt-major rows, seeded, sampler log-probs = score log-probs", async () => {
      const prompts = [Int32Array.of(1, 2, 3), Int32Array.of(4, 5), Int32Array.of(6)];
      const req = { prompts, n: 3, maxNewTokens: 5, temperature: 1, seed: 7 };
      const a = await fsdp.sample(req);
      const b = await fsdp.sample(req);
      assert.equal(a.length, 9);
      assert.deepEqual(a.map((r) => r.promptIndex), [0, 0, 0, 1, 1, 1, 2, 2, 2]);
      assert.deepEqual(a.map((r) => Array.from(r.tokens)), b.map((r) => Array.from(r.tokens)), "same seed, same samples");
      for (const r of a) {
        const p = prompts[r.promptIndex]!;
        const T = p.length + r.tokens.length;
        const tokens = new Int32Array(T);
        tokens.set(p);
        tokens.set(r.tokens, p.length);
        const s = await fsdp.score({ batchSize: 1, seqLen: T, tokens, lengths: Int32Array.of(T), lossMask: new Float32Array(T) }, { model: "policy" });
        const lp = s.logprobs.slice(p.length);
        assert.ok(maxAbsDiff(lp, r.logprobs) < 1e-4, `sampler vs score log-probs: ${maxAbsDiff(lp, r.logprobs)}`);
      }
    });

    test("a bad batch is an ordinary error reply under torchrun; the group stays usable", async () => {
      const b = stepBatches(6)[1]!;
      const bad = { ...b, tokens: b.tokens.map(() => 99) };
      await assert.rejects(fsdp.score(bad, { model: "policy" }), /outside the vocabulary/);
      const s = await fsdp.score(b, { model: "policy" });
      assert.ok(s.logprobs.some((x) => x < 0));
    });

    test("a rank that dies (SIGKILL on rank 1) ends the group: the call fails with one line, no rank is left", async () => {
      // torchrun starts each rank in its own session; the ranks are its children.
      const agent = fsdp.workerPid!;
      const ps = spawnSync("ps", ["-eo", "pid=,ppid="], { encoding: "utf8" }).stdout;
      const ranks = ps.split("\n").map((l) => l.trim().split(/\s+/).map(Number)).filter(([, pp]) => pp === agent).map(([pid]) => pid!);
      const rank1 = ranks.find((pid) => /(^|\0)RANK=1(\0|$)/.test(readFileSync(`/proc/${pid}/environ`, "latin1")));
      assert.ok(rank1 && ranks.length === 2, `ranks ${ranks}`);
      process.kill(rank1, "SIGKILL");
      const err = await fsdp.score(stepBatches(6)[1]!, { model: "policy" }).then(() => null, (e: Error) => e);
      assert.ok(err && err.name === "PeerError" && !err.message.includes("\n"), String(err));
      assert.match(err.message, new RegExp(`^torch worker \\(pid ${agent}\\): score failed: the worker exited \\(code \\d+\\)`));
      await new Promise((r) => setTimeout(r, 1500));
      const alive = ranks.filter((pid) => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, "latin1").includes(") Z "));
      assert.deepEqual(alive, [], "no rank is left");
      assert.deepEqual(groupMembers(agent).filter((l) => !l.includes("<defunct>")), [], "nor torchrun");
    });
  });

  describe("two nodes (two torchrun agents on this machine, static rendezvous)", () => {
    let node1: ChildProcess | undefined;
    let node1Exit: Promise<number | null>;
    let two: TorchEngine;
    before(async () => {
      const port = 20000 + Math.floor(Math.random() * 20000);
      // Node 1: the command docs/scaling.md gives, with 1 rank per "node".
      node1 = spawn(
        resolvePython(),
        ["-m", "torch.distributed.run", "--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "1", "--master-addr", "127.0.0.1", "--master-port", String(port), "-m", "rlvr_worker"],
        { env: { ...process.env, PYTHONPATH: WORKER_ROOT, OMP_WAIT_POLICY: "PASSIVE" }, stdio: ["ignore", "ignore", "pipe"] },
      );
      node1.stderr!.on("data", (d: Buffer) => base.onStderr!(`[node 1] ${d.toString().trimEnd()}`));
      node1Exit = new Promise((r) => node1!.on("exit", (code) => r(code)));
      two = await open({ distributed: { nprocPerNode: 1, nnodes: 2, nodeRank: 0, masterAddr: "127.0.0.1", masterPort: port } });
    });
    after(async () => {
      await two?.close();
      node1?.kill();
    });

    test("node 0's engine drives both nodes: same scores and the same two GRPO updates as one process", async () => {
      assert.match(two.info().device, /x 2 ranks \(fsdp2, gloo\)/);
      const s = await two.score(stepBatches(3)[0]!, { model: "policy", entropy: true });
      assert.ok(maxAbsDiff(scores1.logprobs, s.logprobs) < TOL);
      await grpoSteps(two);
      const w = worstDiff(after1, await weights(two));
      assert.ok(w.diff < TOL, `two-node weights differ from one process by ${w.diff} at ${w.name}`);
      await two.close();
      assert.equal(await node1Exit, 0, "node 1's torchrun exits cleanly after the shutdown");
    });
  });

  describe("DDP", () => {
    let ddp: TorchEngine;
    before(async () => {
      // With gradient checkpointing (recomputed activations must give the same update).
      ddp = await open({ distributed: { nprocPerNode: 2, strategy: "ddp" }, gradientCheckpointing: true });
    });
    after(async () => {
      await ddp?.close();
    });

    test("two GRPO steps give the one-process updated weights within 1e-5", async () => {
      assert.match(ddp.info().device, /x 2 ranks \(ddp, gloo\)/);
      const norms2 = await grpoSteps(ddp);
      const w = worstDiff(after1, await weights(ddp));
      assert.ok(w.diff < TOL, `DDP weights differ from one process by ${w.diff} at ${w.name}`);
      for (let i = 0; i < norms1.length; i++) assert.ok(Math.abs(norms1[i]! - norms2[i]!) < 1e-4 * (1 + norms1[i]!), `grad norm ${norms2[i]} vs ${norms1[i]}`);
    });

    test("a checkpoint written under DDP reloads in one process with the same weights", async () => {
      const dir = join(tmp, "ddp-ckpt");
      await ddp.save(dir, { optimizer: true });
      const re = await open({}, dir);
      try {
        const w = worstDiff(await weights(ddp), await weights(re));
        assert.equal(w.diff, 0, `${w.diff} at ${w.name}`);
      } finally {
        await re.close();
      }
    });
  });
});

test("the torchrun command line: standalone on one node, static rendezvous on several", () => {
  assert.deepEqual(workerLaunch(undefined).args, ["-u", "-m", "rlvr_worker"]);
  assert.deepEqual(workerLaunch({ nprocPerNode: 2, backend: "gloo" }), {
    args: ["-u", "-m", "torch.distributed.run", "--nproc-per-node=2", "--standalone", "-m", "rlvr_worker"],
    env: { RLVR_DIST_TIMEOUT_S: "1800", RLVR_DIST_BACKEND: "gloo" },
  });
  assert.deepEqual(workerLaunch({ nprocPerNode: 8, nnodes: 2, masterAddr: "10.0.0.1", masterPort: 29500 }).args, [
    "-u", "-m", "torch.distributed.run", "--nproc-per-node=8",
    "--nnodes=2", "--node-rank=0", "--master-addr=10.0.0.1", "--master-port=29500", "-m", "rlvr_worker",
  ]);
});

test("model.distributed fields are checked before anything starts", async () => {
  await assert.rejects(TorchEngine.fromPretrained("/nonexistent", { distributed: { nprocPerNode: 0 } }), /model\.distributed\.nprocPerNode/);
  await assert.rejects(TorchEngine.fromPretrained("/nonexistent", { distributed: { nprocPerNode: 2, nodeRank: 1, nnodes: 2, masterPort: 29500 } }), /model\.distributed\.nodeRank.*--node-rank 1/);
  await assert.rejects(TorchEngine.fromPretrained("/nonexistent", { distributed: { nprocPerNode: 2, nnodes: 2 } }), /model\.distributed\.masterPort/);
});
