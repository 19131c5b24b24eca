// serveTinker's routes without the SDK (Fastify inject): bad input answered with one line naming
// the field, futures and try_again, idempotent retries by seq_id, the recorded SDK protobuf body.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serveTinker, type TinkerServer } from "../../src/tinker/server.ts";
import { writeTinyModel } from "../tinker/fixture.ts";
import { RECORDED } from "./recorded.ts";

describe("tinker server routes", () => {
  let dir: string;
  let s: TinkerServer;
  const logs: string[] = [];
  const post = async (url: string, payload: unknown) => {
    const r = await s.app.inject({ method: "POST", url, payload: payload as object });
    return { status: r.statusCode, body: r.json() as Record<string, unknown> };
  };
  const result = async (requestId: unknown) => {
    for (;;) {
      const r = await post("/api/v1/retrieve_future", { request_id: requestId });
      if (r.body["type"] !== "try_again") return r;
    }
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "rlvr-tinker-routes-"));
    await writeTinyModel(join(dir, "tiny"));
    s = await serveTinker({ port: 0, models: { tiny: join(dir, "tiny") }, dataDir: join(dir, "data"), log: (l) => logs.push(l), pollMs: 50 });
  });
  after(async () => {
    await s?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("healthz, capabilities, and an unknown route named", async () => {
    assert.deepEqual((await s.app.inject({ url: "/api/v1/healthz" })).json(), { status: "ok" });
    assert.deepEqual((await s.app.inject({ url: "/api/v1/get_server_capabilities" })).json(), { supported_models: [{ model_name: "tiny", trainable: true, sampleable: true }] });
    const r = await post("/api/v1/nope", {});
    assert.equal(r.status, 404);
    assert.match(String(r.body["error"]), /no route POST \/api\/v1\/nope/);
  });

  it("create_model with an unknown base model: 400 naming the field and the registered names", async () => {
    const r = await post("/api/v1/create_model", { session_id: "s", model_seq_id: 9, base_model: "Qwen/Qwen3-8B", lora_config: { rank: 8 } });
    assert.equal(r.status, 400);
    assert.match(String(r.body["error"]), /create_model\.base_model: "Qwen\/Qwen3-8B" is neither a model this server registered \(tiny\)/);
  });

  it("the SDK's protobuf forward request runs on model s:train:0; an out-of-vocabulary target fails as a user error", async () => {
    const c = await post("/api/v1/create_model", { session_id: "s", model_seq_id: 0, base_model: "tiny", lora_config: { rank: 4 } });
    assert.deepEqual((await result(c.body["request_id"])).body, { type: "create_model", model_id: "s:train:0" });
    const fb = await s.app.inject({ method: "POST", url: "/api/v1/forward_backward", payload: Buffer.from(RECORDED, "hex"), headers: { "content-type": "application/x-protobuf" } });
    assert.equal(fb.statusCode, 200);
    const r = await result(fb.json()["request_id"]);
    assert.equal(r.body["category"], "user");
    assert.match(String(r.body["error"]), /data\[0\]: token id 300000 is outside the vocabulary \[0, 20\)/);
  });

  it("lora_config is checked at create_model: rank, train_* booleans, at least one target", async () => {
    for (const [lora, want] of [
      [{ rank: 0 }, /lora_config\.rank must be a positive integer/],
      [{ rank: 4, train_mlp: "yes" }, /lora_config\.train_mlp must be true or false/],
      [{ rank: 4, train_mlp: false, train_attn: false, train_unembed: false }, /at least one of train_attn, train_mlp, train_unembed/],
    ] as const) {
      const r = await post("/api/v1/create_model", { session_id: "s", model_seq_id: 50, base_model: "tiny", lora_config: lora });
      assert.equal(r.status, 400);
      assert.match(String(r.body["error"]), want);
    }
  });

  it("a second LoRA client and a base-model sampler on the same base share its frozen weights (no copy)", async () => {
    logs.length = 0;
    for (const seq of [60, 61]) {
      const c = await post("/api/v1/create_model", { session_id: "share", model_seq_id: seq, base_model: "tiny", lora_config: { rank: 2, train_unembed: false } });
      assert.equal((await result(c.body["request_id"])).body["model_id"], `share:train:${seq}`);
    }
    const smp = await post("/api/v1/create_sampling_session", { base_model: "tiny" });
    assert.equal(smp.status, 200);
    assert.ok(logs.some((l) => /a LoRA rank 2 client shares the frozen base .*tiny already loaded/.test(l)), logs.join("\n"));
    assert.ok(logs.some((l) => /a base-model sampler shares the frozen base/.test(l)), logs.join("\n"));
  });

  it("a sampling session released past the newest 8 is reloaded on its next request, not an error", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) ids.push(String((await post("/api/v1/create_sampling_session", { base_model: "tiny" })).body["sampling_session_id"]));
    logs.length = 0;
    const r = await post("/api/v1/asample", { sampling_session_id: ids[0], seq_id: 0, num_samples: 1, prompt: { chunks: [{ type: "encoded_text", tokens: [5, 6] }] }, sampling_params: { max_tokens: 2, seed: 1 } });
    assert.equal(r.status, 200);
    assert.equal((await result(r.body["request_id"])).body["type"], "sample");
    assert.ok(logs.some((l) => l.includes(`reloading released sampling session ${ids[0]}`)), logs.join("\n"));
    assert.equal((await post("/api/v1/asample", { sampling_session_id: "sampler-nope", prompt: { chunks: [] } })).status, 400);
  });

  it("load_state of an adapter with another rank is refused as a user error naming both", async () => {
    const mk = async (seq: number, rank: number) => (await result((await post("/api/v1/create_model", { session_id: "ld", model_seq_id: seq, base_model: "tiny", lora_config: { rank } })).body["request_id"])).body["model_id"];
    const [a, b] = [await mk(0, 2), await mk(1, 4)];
    const saved = await result((await post("/api/v1/save_weights", { model_id: a, seq_id: 1, path: "r2" })).body["request_id"]);
    const r = await result((await post("/api/v1/load_weights", { model_id: b, seq_id: 1, path: saved.body["path"] })).body["request_id"]);
    assert.equal(r.body["category"], "user");
    assert.match(String(r.body["error"]), /holds LoRA rank 2 on .*lm_head.*; training client ld:train:1 trains LoRA rank 4/);
  });

  it("a model directory without tokenizer files trains and samples on token ids; stop strings are refused naming it", async () => {
    const bare = join(dir, "bare");
    await mkdir(bare);
    for (const f of ["config.json", "model.safetensors"]) await copyFile(join(dir, "tiny", f), join(bare, f));
    const c = await post("/api/v1/create_model", { session_id: "bare", model_seq_id: 0, base_model: bare, lora_config: { rank: 2 } });
    assert.equal((await result(c.body["request_id"])).body["model_id"], "bare:train:0");
    const ask = async (stop: unknown) => {
      const r = await post("/api/v1/asample", { num_samples: 1, base_model: bare, prompt: { chunks: [{ type: "encoded_text", tokens: [5, 6] }] }, sampling_params: { max_tokens: 3, seed: 1, stop } });
      return (await result(r.body["request_id"])).body;
    };
    assert.equal(((await ask([2]))["sequences"] as unknown[]).length, 1);
    assert.match(String((await ask(["="]))["error"]), /stop strings .* needs a tokenizer, and .*bare has none \(no tokenizer\.json\)/);
  });

  it("a JSON forward_backward body is refused with the content type to use", async () => {
    const r = await post("/api/v1/forward_backward", { model_id: "s:train:0" });
    assert.equal(r.status, 400);
    assert.match(String(r.body["error"]), /expected a protobuf body \(Content-Type: application\/x-protobuf\)/);
  });

  // The recorded request carried seq_id 12, so this model's next requests are 13, 14, …
  it("optim_step: a retry with the same seq_id gets the same future; bad Adam params are named", async () => {
    const a = await post("/api/v1/optim_step", { model_id: "s:train:0", seq_id: 13, adam_params: { learning_rate: 1e-3 } });
    const b = await post("/api/v1/optim_step", { model_id: "s:train:0", seq_id: 13, adam_params: { learning_rate: 1e-3 } });
    assert.equal(a.body["request_id"], b.body["request_id"]);
    assert.ok("grad_norm" in ((await result(a.body["request_id"])).body["metrics"] as object));
    const bad = await post("/api/v1/optim_step", { model_id: "s:train:0", seq_id: 14, adam_params: { learning_rate: "fast" } });
    assert.equal(bad.status, 400);
    assert.match(String(bad.body["error"]), /optim_step\.adam_params\.learning_rate must be a finite number >= 0, got "fast"/);
  });

  it("a tinker:// path that escapes the data directory is refused", async () => {
    const r = await post("/api/v1/load_weights", { model_id: "s:train:0", seq_id: 15, path: "tinker://../weights/x", optimizer: false });
    assert.equal(r.status, 400);
    assert.match(String(r.body["error"]), /no checkpoint tinker:\/\/\.\.\/weights\/x/);
  });

  it("sessions/<id>/finish releases the session's training models", async () => {
    const sid = (await post("/api/v1/create_session", { tags: [], sdk_version: "0.38.0" })).body["session_id"] as string;
    const c = await post("/api/v1/create_model", { session_id: sid, model_seq_id: 0, base_model: "tiny" });
    const mid = (await result(c.body["request_id"])).body["model_id"];
    assert.equal((await post("/api/v1/get_info", { model_id: mid })).status, 200);
    assert.equal((await s.app.inject({ method: "POST", url: `/api/v1/sessions/${sid}/finish`, payload: { reason: { type: "ok" } } })).statusCode, 200);
    const gone = await post("/api/v1/get_info", { model_id: mid });
    assert.equal(gone.status, 400);
    assert.match(String(gone.body["error"]), /no training model/);
  });

  it("asample: stop strings and stop ids end a sample at the first token; a seed repeats the samples", async () => {
    const prompt = { chunks: [{ type: "encoded_text", tokens: [5, 6] }] };
    const everyChar = [..."0123456789+= abc", "<"];
    const run = async (sampling_params: Record<string, unknown>) => {
      const r = await post("/api/v1/asample", { num_samples: 4, base_model: "tiny", prompt, sampling_params, prompt_logprobs: true });
      return (await result(r.body["request_id"])).body as { sequences: { stop_reason: string; tokens: number[]; logprobs: number[] }[]; prompt_logprobs: (number | null)[] };
    };
    const byString = await run({ max_tokens: 6, seed: 7, stop: everyChar });
    for (const q of byString.sequences) assert.deepEqual([q.tokens.length, q.stop_reason, q.logprobs.length], [1, "stop", 1]);
    assert.equal(byString.prompt_logprobs[0], null);
    assert.ok(typeof byString.prompt_logprobs[1] === "number");
    const byId = await run({ max_tokens: 6, seed: 7, stop: Array.from({ length: 20 }, (_, i) => i) });
    for (const q of byId.sequences) assert.deepEqual([q.tokens.length, q.stop_reason], [1, "stop"]);
    const none = await run({ max_tokens: 6, seed: 7, stop: [] });
    for (const q of none.sequences) assert.deepEqual([q.tokens.length, q.stop_reason], [6, "length"]);
    const again = await run({ max_tokens: 6, seed: 7, stop: [] });
    assert.deepEqual(again.sequences.map((q) => q.tokens), none.sequences.map((q) => q.tokens));
    assert.deepEqual(byString.sequences.map((q) => q.tokens[0]), none.sequences.map((q) => q.tokens[0]));
  });

  it("asample: topk_sample_logprobs is refused by name; topk_prompt_logprobs answers k entries a position; a bad prompt_logprobs_last_n is named", async () => {
    const ask = async (extra: Record<string, unknown>) => {
      const r = await post("/api/v1/asample", { num_samples: 1, base_model: "tiny", prompt: { chunks: [{ type: "encoded_text", tokens: [5, 6, 7] }] }, sampling_params: { max_tokens: 2 }, ...extra });
      assert.equal((r.body["sample_sequence_ids"] as string[]).length, 1);
      return (await result(r.body["request_id"])).body;
    };
    assert.match(String((await ask({ topk_sample_logprobs: 3 }))["error"]), /topk_sample_logprobs .* is not supported/);
    const top = (await ask({ topk_prompt_logprobs: 2 }))["topk_prompt_logprobs"] as ([number, number][] | null)[];
    assert.equal(top[0], null);
    assert.deepEqual(top.slice(1).map((r) => r!.length), [2, 2]);
    assert.match(String((await ask({ prompt_logprobs: true, prompt_logprobs_last_n: 3 }))["error"]), /prompt_logprobs_last_n must be between 1 and len\(prompt\) - 1 = 2/);
  });
});
