// tinker-cookbook (pinned in .ci/run beside the SDK in .venv-tinker, or $TINKER_PYTHON) against
// serveTinker: the cookbook's own RL trainer (`tinker_cookbook.rl.train.main` with a `train.Config`)
// runs its arithmetic recipe's Env (ArithmeticEnv / ProblemGroupBuilder) through its `role_colon`
// renderer over a tiny local model, on problems read from a local JSONL file (cookbook_rl.py).
// Checks: every step's metrics come back, a gradient exactly when some group's rewards differ, the server saw the sample / forward_backward /
// optim_step calls of each step, the sampler's log-probs equal the trainer's (the cookbook's own
// kl_sample_train metric), and the final checkpoint lands in the server's data directory.
// Run with `npm run test:tinker` (needs the SDK and the cookbook installed).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serveTinker, type TinkerServer } from "../../src/tinker/server.ts";
import { writeTinyModel, ASCII_ALPHABET } from "./fixture.ts";

const python = process.env["TINKER_PYTHON"] ?? new URL("../../.venv-tinker/bin/python", import.meta.url).pathname;
const cookbook = existsSync(python) && spawnSync(python, ["-c", "import tinker_cookbook.rl.train"]).status === 0;

/** Problems of the local dataset; the run trains on them two per step (cookbook_rl.py BATCH_SIZE). */
const PROBLEMS = [[3, 4], [1, 1], [5, 2], [0, 7], [2, 2], [6, 3], [4, 4], [1, 8], [2, 5], [3, 3], [7, 1], [0, 9]];
const STEPS = PROBLEMS.length / 2;
const ROLLOUTS_PER_STEP = 2 * 4; // BATCH_SIZE × GROUP_SIZE

function runPython(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((res) => {
    const p = spawn(python, args, { cwd: tmpdir(), env: { ...process.env, TINKER_API_KEY: "tml-local" } });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    p.on("close", (code) => res({ code: code ?? 1, out, err }));
  });
}

describe("tinker-cookbook's rl.train against rlvr tinker", { skip: cookbook ? false : `no tinker-cookbook importable by ${python}` }, () => {
  let dir: string;
  let server: TinkerServer;
  const steps: Record<string, unknown>[] = [];
  const checkpoints: Record<string, unknown>[] = [];
  const calls = new Map<string, number>();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "rlvr-cookbook-test-"));
    const model = join(dir, "tiny");
    // role_colon renders "User: …\n\nAssistant:"; the few-shot prompt is ~70 characters.
    await writeTinyModel(model, 0, { alphabet: ASCII_ALPHABET, context: 128 });
    await writeFile(join(dir, "problems.jsonl"), PROBLEMS.map(([x, y]) => JSON.stringify({ x, y })).join("\n") + "\n");
    server = await serveTinker({ port: 0, models: { tiny: model }, dataDir: join(dir, "data"), log: () => {} });
    server.app.server.on("request", (req: { url?: string }) => {
      const route = (req.url ?? "").split("?")[0]!;
      calls.set(route, (calls.get(route) ?? 0) + 1);
    });
    const r = await runPython([new URL("./cookbook_rl.py", import.meta.url).pathname, server.url, model, join(dir, "problems.jsonl"), join(dir, "log")]);
    let done = false;
    for (const line of r.out.split("\n")) if (line.startsWith("{")) {
      const j = JSON.parse(line) as Record<string, unknown>;
      if (j["check"] === "step" && "env/all/reward/total" in j) steps.push(j);
      if (j["check"] === "checkpoint") checkpoints.push(j);
      if (j["check"] === "done") done = true;
    }
    if (!done) throw new Error(`cookbook_rl.py failed (exit ${r.code}):\n${r.err.slice(-3000)}`);
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("runs one training step per batch of the local dataset, each with the recipe's metrics", () => {
    assert.deepEqual(steps.map((s) => s["step"]), Array.from({ length: STEPS }, (_, i) => i));
    for (const s of steps) {
      assert.equal(s["env/all/total_episodes"], ROLLOUTS_PER_STEP);
      const reward = s["env/all/reward/total"] as number;
      // ArithmeticEnv: 0.1·(format − 1) + correct, so each rollout's reward is −0.1, 0, 0.9 or 1.
      assert.ok(reward >= -0.1 - 1e-9 && reward <= 1 + 1e-9, `step ${s["step"]}: reward ${reward}`);
      assert.equal(typeof s["env/all/correct"], "number");
      assert.ok(Number.isFinite(s["grad_norm"] as number), `step ${s["step"]}: grad_norm ${s["grad_norm"]}`);
    }
  });

  it("a step whose groups all have one reward has a zero gradient; one with a mixed group trains", () => {
    // Group-centred advantages are zero when every rollout of a group scores the same, so the
    // importance-sampling loss has no gradient; the seeded sampler gives some mixed group.
    for (const s of steps) {
      const mixed = (s["env/all/by_group/frac_mixed"] as number) > 0;
      const norm = s["grad_norm"] as number;
      assert.ok(mixed ? norm > 1e-3 : norm === 0, `step ${s["step"]}: frac_mixed ${s["env/all/by_group/frac_mixed"]}, grad_norm ${norm}`);
    }
    assert.ok(steps.some((s) => (s["grad_norm"] as number) > 0), "no step had a mixed group: nothing trained");
  });

  it("the server saw each step's sampling, forward_backward and optim_step", () => {
    // One asample per rollout (the cookbook samples each env on its own), one forward_backward and
    // one optim_step per step (num_substeps 1), a sampler checkpoint per step.
    assert.equal(calls.get("/api/v1/asample"), STEPS * ROLLOUTS_PER_STEP);
    assert.equal(calls.get("/api/v1/forward_backward"), STEPS);
    assert.equal(calls.get("/api/v1/optim_step"), STEPS);
    assert.ok((calls.get("/api/v1/save_weights_for_sampler") ?? 0) >= STEPS);
  });

  it("the sampler's log-probs equal the trainer's (the cookbook's kl_sample_train metric)", () => {
    for (const s of steps) {
      const kl = s["optim/kl_sample_train_v1"] as number;
      assert.ok(Math.abs(kl) < 1e-4, `step ${s["step"]}: kl_sample_train_v1 ${kl}`);
    }
  });

  it("the final checkpoint (state and sampler weights) lands in the server's data directory", () => {
    const final = checkpoints.find((c) => c["name"] === "final");
    assert.ok(final, `checkpoints: ${JSON.stringify(checkpoints)}`);
    for (const key of ["state_path", "sampler_path"]) {
      const path = String(final[key]);
      assert.match(path, /^tinker:\/\//);
      assert.ok(existsSync(join(server.dataDir, path.slice("tinker://".length))), `${key} ${path} is not under ${server.dataDir}`);
    }
  });
});
