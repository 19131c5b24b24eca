// A run with model.lora through the real CLI (embedded engine): the checkpoints are peft adapter
// directories (with the random-init base in base/ and merged/), the reference resets snapshot the
// adapters, and `rlvr eval` opens the adapter and the merged checkpoint with the same result.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configYaml, rlvr, tinyConfig } from "./helpers.ts";
import { readAdapterInfo } from "../../src/engines/lora.ts";
import { resolveServedCheckpoint } from "../../src/serve/server.ts";
import { TorchEngine } from "../../src/engines/torch/engine.ts";
import { spawnSync } from "node:child_process";

const probe = TorchEngine.probe();
const peft = probe.ok && spawnSync(probe.python, ["-c", "import peft"]).status === 0;

const root = mkdtempSync(join(tmpdir(), "rlvr-lora-run-"));
after(() => rmSync(root, { recursive: true, force: true }));

describe("a LoRA run (model.lora, embedded engine)", () => {
  it("trains adapters, checkpoints them in peft's layout with merged/, and rlvr eval opens both alike", async () => {
    const out = join(root, "run");
    const cfg = tinyConfig(out, { sft: { steps: 4, batchSize: 32, lr: 0.05, schedule: "constant" } });
    cfg.model = { ...cfg.model, lora: { rank: 2, alpha: 4, targets: ["q_proj", "v_proj", "down_proj"], saveMerged: true } } as typeof cfg.model;
    const cfgPath = join(root, "cfg.yaml");
    writeFileSync(cfgPath, configYaml(cfg));
    const r = await rlvr(["train", cfgPath, "--out", out]).done;
    assert.equal(r.code, 0, r.stderr);
    const final = join(out, "checkpoints", "final");
    const files = readdirSync(final);
    for (const f of ["adapter_config.json", "adapter_model.safetensors", "base", "merged", "tokenizer.json"]) assert.ok(files.includes(f), `final/ has ${f} (${files.join(", ")})`);
    assert.ok(!files.includes("model.safetensors"));
    const info = readAdapterInfo(final)!;
    assert.equal(info.base, join(final, "base"), "the random-init base is named relatively, so the renamed checkpoint still finds it");
    assert.deepEqual(info.lora.targets, ["down_proj", "q_proj", "v_proj"]);
    assert.equal(resolveServedCheckpoint(final), final, "rlvr serve accepts an adapter directory");
    assert.ok(existsSync(join(out, "checkpoints", "step-10", "adapter_config.json")));
    const evalOf = async (dir: string) => {
      const e = await rlvr(["eval", dir, "--task", "addition", "--difficulty", "1", "--n", "8", "--json"]).done;
      assert.equal(e.code, 0, e.stderr);
      return e.stdout;
    };
    const a = await evalOf(final);
    const m = await evalOf(join(final, "merged"));
    const result = (s: string) => {
      const j = JSON.parse(s.slice(s.indexOf("{"))) as Record<string, unknown>;
      delete j.checkpoint;
      return j;
    };
    assert.deepEqual(result(a), result(m), "greedy answers of the adapter and of merged/ agree");
    assert.ok(readFileSync(join(out, "metrics.jsonl"), "utf8").includes('"stage":"rl"'));
  });

  it("on the torch engine (peft): the run's adapter checkpoint opens in rlvr eval (embedded engine) like its merged/", { skip: peft ? false : "needs the torch engine with peft" }, async () => {
    const out = join(root, "torch-run");
    const cfg = tinyConfig(out, { sft: { steps: 2, batchSize: 16, lr: 0.05, schedule: "constant" } });
    cfg.model = { ...cfg.model, engine: "torch", device: "cpu", lora: { rank: 2, alpha: 4, saveMerged: true } } as typeof cfg.model;
    cfg.rl = { ...cfg.rl!, steps: 3 };
    const cfgPath = join(root, "torch.yaml");
    writeFileSync(cfgPath, configYaml(cfg));
    const r = await rlvr(["train", cfgPath, "--out", out]).done;
    assert.equal(r.code, 0, r.stderr);
    const final = join(out, "checkpoints", "final");
    for (const f of ["adapter_config.json", "adapter_model.safetensors", "base", "merged"]) assert.ok(existsSync(join(final, f)), `final/${f}`);
    assert.equal(readAdapterInfo(final)!.base, join(final, "base"));
    const evalOf = async (dir: string) => {
      const e = await rlvr(["eval", dir, "--task", "addition", "--difficulty", "1", "--n", "8", "--json"]).done;
      assert.equal(e.code, 0, e.stderr);
      const j = JSON.parse(e.stdout.slice(e.stdout.indexOf("{"))) as Record<string, unknown>;
      delete j.checkpoint;
      return j;
    };
    assert.deepEqual(await evalOf(final), await evalOf(join(final, "merged")));
  });
});
