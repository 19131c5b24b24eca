// The official tinker SDK (pinned in .ci/run with torch and transformers; a venv at .venv-tinker
// or $TINKER_PYTHON) against
// serveTinker on a tiny local model, every training client a LoRA one: a supervised loop whose
// loss falls, an RL loop whose reward rises, forward vs compute_logprobs, every built-in loss
// against its formula, gradient accumulation, save/load state, peft adapter checkpoints, two
// clients on one base at once not interfering, the base as a reference model. Run with
// `npm run test:tinker` (needs the SDK installed).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serveTinker, type TinkerServer } from "../../src/tinker/server.ts";
import { writeTinyModel } from "./fixture.ts";

const python = process.env["TINKER_PYTHON"] ?? new URL("../../.venv-tinker/bin/python", import.meta.url).pathname;

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

describe("tinker SDK against rlvr tinker", { skip: existsSync(python) ? false : `no tinker SDK at ${python}` }, () => {
  let dir: string;
  let server: TinkerServer;
  const checks = new Map<string, Record<string, unknown>>();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "rlvr-tinker-test-"));
    await writeTinyModel(join(dir, "tiny"));
    server = await serveTinker({ port: 0, models: { tiny: join(dir, "tiny") }, dataDir: join(dir, "data"), log: () => {} });
    const r = await runPython([new URL("./sdk_loops.py", import.meta.url).pathname, server.url, "tiny", join(dir, "tiny")]);
    for (const line of r.out.split("\n")) if (line.startsWith("{")) {
      const j = JSON.parse(line) as Record<string, unknown>;
      checks.set(String(j["check"]), j);
    }
    if (!checks.has("done")) throw new Error(`sdk_loops.py failed (exit ${r.code}):\n${r.err.slice(-3000)}`);
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("lists the registered model", () => assert.deepEqual(checks.get("capabilities")!["models"], ["tiny"]));

  it("get_tokenizer loads the model's tokenizer; a local directory works as base_model", () => {
    const c = checks.get("tokenizer")!;
    assert.deepEqual(c["ids"], c["want"]);
    assert.deepEqual(c["with_bos"], [1, ...(c["want"] as number[])], "add_special_tokens (the default) prepends <bos>, as rlvr's own encode does");
    assert.equal(c["by_dir"], join(dir, "tiny"));
  });

  it("supervised loop (cross_entropy): the per-token loss falls by a third", () => {
    const l = checks.get("sl")!["losses"] as number[];
    assert.ok(l.at(-1)! < l[0]! * 0.67, `loss ${l[0]} → ${l.at(-1)}`);
  });

  it("RL loop (importance_sampling): the mean reward rises", () => {
    const r = checks.get("rl")!["rewards"] as number[];
    const first = (r[0]! + r[1]!) / 2;
    const last = (r.at(-1)! + r.at(-2)!) / 2;
    assert.ok(last > first + 0.3, `reward ${r.join(", ")}`);
  });

  it("forward's log-probs equal compute_logprobs on saved weights, and the loss is −Σ w·lp", () => {
    const c = checks.get("logprobs")!;
    const f = c["forward"] as number[];
    const s = c["compute"] as number[];
    f.forEach((v, i) => assert.ok(Math.abs(v - s[i]!) < 1e-5, `position ${i}: ${v} vs ${s[i]}`));
    assert.ok(Math.abs((c["loss"] as number) - (c["manual"] as number)) < 1e-5);
  });

  it("importance_sampling, ppo, cispo and dro match their formulas on forward's log-probs", () => {
    const c = checks.get("losses")!;
    const got = c["got"] as Record<string, number>;
    const want = c["expect"] as Record<string, number>;
    for (const k of Object.keys(want)) assert.ok(Math.abs(got[k]! - want[k]!) < 1e-4 * Math.max(1, Math.abs(want[k]!)), `${k}: ${got[k]} vs ${want[k]}`);
  });

  it("gradients accumulate across forward_backward calls until optim_step", () => {
    const c = checks.get("accumulate")! as { halves: number; full: number; before: number };
    assert.ok(Math.abs(c.halves - c.full) < 1e-3 * Math.abs(c.full), `halves ${c.halves} vs full ${c.full}`);
    assert.ok(Math.abs(c.full - c.before) > 1e-3, "the step changed the weights");
  });

  it("forward_backward_custom: a torch loss 2·CE updates exactly as cross_entropy with doubled weights", () => {
    const c = checks.get("custom")! as Record<string, number>;
    assert.ok(Math.abs(c["custom_loss"]! - c["ce_loss"]!) < 1e-4 * Math.abs(c["ce_loss"]!), `${c["custom_loss"]} vs ${c["ce_loss"]}`);
    assert.ok(Math.abs(c["after_custom"]! - c["after_ce"]!) < 1e-4 * Math.abs(c["after_ce"]!), `${c["after_custom"]} vs ${c["after_ce"]}`);
  });

  it("two training clients on one base model: training one leaves the other unchanged", () => {
    const c = checks.get("two_clients")! as Record<string, number>;
    assert.equal(c["two_after"], c["two_before"]);
    assert.ok(c["one"]! < c["two_before"]! - 1e-3, `one ${c["one"]} vs two ${c["two_before"]}`);
  });

  it("LoRA: a checkpoint is a peft adapter (rank, alpha 32; the SDK's defaults train attention, MLP and head); train_mlp/train_unembed=False leave attention only", () => {
    const c = checks.get("adapter")!;
    assert.equal(c["r"], 8);
    assert.equal(c["alpha"], 32);
    assert.deepEqual(c["targets"], ["down_proj", "gate_proj", "k_proj", "lm_head", "o_proj", "q_proj", "up_proj", "v_proj"]);
    assert.deepEqual(c["attn_only"], [true, 2, true, false, false]);
  });

  it("two training clients on one base at once, interleaved: B ends exactly as a client with B's seed trained alone", () => {
    const c = checks.get("interleaved")! as Record<string, number[]>;
    c["b"]!.forEach((v, i) => assert.ok(Math.abs(v - c["c"]![i]!) < 1e-6, `position ${i}: ${v} vs ${c["c"]![i]}`));
    assert.ok(c["a"]!.some((v, i) => Math.abs(v - c["b"]![i]!) > 1e-3), "A trained on other data");
  });

  it("the base as a reference model: compute_logprobs on base_model equal a fresh LoRA client's forward, not a trained one's", () => {
    const c = checks.get("reference")! as Record<string, number[]>;
    c["base"]!.forEach((v, i) => assert.ok(Math.abs(v - c["fresh"]![i]!) < 1e-5, `position ${i}: ${v} vs ${c["fresh"]![i]}`));
    assert.ok(c["base"]!.some((v, i) => Math.abs(v - c["trained"]![i]!) > 1e-3));
  });

  it("topk_prompt_logprobs: the k most likely next tokens at each prompt position, sorted, the actual token's log-prob among them when it ranks", () => {
    const c = checks.get("topk")! as { topk: ([number, number][] | null)[]; prompt: (number | null)[]; tokens: number[] };
    assert.equal(c.topk.length, c.tokens.length);
    assert.equal(c.topk[0], null);
    let ranked = 0;
    c.topk.slice(1).forEach((row, i) => {
      const t = i + 1;
      assert.equal(row!.length, 3);
      for (let j = 1; j < 3; j++) assert.ok(row![j]![1] <= row![j - 1]![1], `position ${t} not sorted`);
      const hit = row!.find(([id]) => id === c.tokens[t]);
      if (hit) {
        ranked++;
        assert.ok(Math.abs(hit[1] - c.prompt[t]!) < 1e-5, `position ${t}: top-k ${hit[1]} vs prompt log-prob ${c.prompt[t]}`);
      } else assert.ok(c.prompt[t]! <= row![2]![1] + 1e-6, `position ${t}: an unlisted token outranks the 3rd`);
    });
    assert.ok(Math.exp(c.topk[1]![0]![1]) <= 1 && ranked >= 0);
  });

  it("a tied Qwen2 directory written by transformers alone (no tokenizer): LoRA with the head trains (ppo loss falls), its sampler scores as forward, samples", () => {
    const c = checks.get("bare_qwen2")! as { losses: number[]; forward: number[]; compute: number[]; sample: number[] };
    assert.ok(c.losses[2]! < c.losses[0]!, `ppo loss ${c.losses.join(" → ")}`);
    c.forward.forEach((v, i) => assert.ok(Math.abs(v - c.compute[i]!) < 1e-5, `position ${i}: ${v} vs ${c.compute[i]}`));
    assert.ok(c.sample.length >= 1 && c.sample.length <= 3);
  });

  it("save_state / load_state (with and without optimizer) / create_training_client_from_state round trip", () => {
    const c = checks.get("state")! as Record<string, number>;
    assert.ok(Math.abs(c["moved"]! - c["before"]!) > 1e-3);
    for (const k of ["restored", "restored_opt", "other_client"]) assert.ok(Math.abs(c[k]! - c["before"]!) < 1e-5, `${k} ${c[k]} vs ${c["before"]}`);
  });

  it("a target that is not the next input token: NaN when unweighted, refused by name when a loss reads it", () => {
    const c = checks.get("unscorable")!;
    const lp = c["logprobs"] as (number | null)[];
    assert.ok(lp[0] === null || Number.isNaN(lp[0]), `position 0: ${lp[0]}`);
    assert.ok(typeof lp[1] === "number" && lp[1] < 0 && typeof lp[2] === "number" && lp[2] < 0);
    assert.equal(c["raised"], true);
    assert.match(String(c["message"]), /reads position 0.*not the next input token/);
  });

  it("save_weights_external: each file downloadable from the server; delete_checkpoint removes one", () => {
    const c = checks.get("external")!;
    assert.deepEqual(c["files"], ["adapter_config.json", "adapter_model.safetensors", "tokenizer.json", "tokenizer_config.json"]);
    for (const [f, n] of Object.entries(c["sizes"] as Record<string, number>)) assert.ok(n > 0, `${f} is empty`);
    const ids = checks.get("deleted")!["ids"] as string[];
    assert.ok(!ids.includes("weights/to-delete") && ids.includes("weights/after-sl") && ids.includes("external_weights/export"), ids.join(", "));
  });

  it("sampler weights by name, checkpoints listing, and an unsupported loss refused by name", () => {
    assert.equal(checks.get("sampler_path")!["n"], 2);
    const ids = checks.get("checkpoints")!["ids"] as string[];
    assert.ok(ids.includes("weights/after-sl") && ids.includes("sampler_weights/named"), ids.join(", "));
    const u = checks.get("unsupported")!;
    assert.equal(u["raised"], true);
    assert.match(String(u["message"]), /unknown loss_fn "gspo"/);
  });
});
