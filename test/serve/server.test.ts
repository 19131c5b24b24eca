// rlvr serve through the official `openai` SDK on a tiny random model: chat, completions,
// streaming, logprobs, token ids (equal to the engine's own sample for the same seed), stop
// strings, OpenAI-shaped 4xx errors that leave the server serving, and 200 concurrent requests.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { serve } from "../../src/serve/server.ts";
import type { Server } from "../../src/serve/context.ts";
import { makeTinyRun } from "./helpers.ts";

let root: string;
let server: Server;
let client: OpenAI;
const MODEL = "tiny-run";

before(async () => {
  root = mkdtempSync(join(tmpdir(), "rlvr-serve-"));
  const run = await makeTinyRun(root);
  server = await serve({ checkpoint: run, port: 0 });
  client = new OpenAI({ baseURL: server.url, apiKey: "unused", maxRetries: 0 });
});

after(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

/** The engine's own samples for the same prompt ids and settings. */
function engineSample(prompts: number[][], o: { n: number; seed: number; temperature: number; topP?: number; maxTokens: number }) {
  return server.engine.sample({ prompts: prompts.map((p) => Int32Array.from(p)), n: o.n, seed: o.seed, temperature: o.temperature, topP: o.topP ?? 1, maxNewTokens: o.maxTokens, stopTokens: [server.tokenizer.eosId] });
}

test("GET /v1/models lists the served model", async () => {
  const models = await client.models.list();
  assert.deepEqual(models.data.map((m) => m.id), [MODEL]);
  assert.equal((await client.models.retrieve(MODEL)).id, MODEL);
  await assert.rejects(client.models.retrieve("other"), OpenAI.NotFoundError);
  assert.equal((await fetch(server.url.replace(/\/v1$/, "/health"))).status, 200);
});

test("chat: token ids, text and logprobs equal the engine's sample for the same seed", async () => {
  const res = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "what is 2+2?" }], n: 3, seed: 7, temperature: 1, max_tokens: 12, logprobs: true, top_logprobs: 1, return_token_ids: true } as never);
  const r = res as unknown as { prompt_token_ids: number[]; choices: { token_ids: number[]; message: { content: string }; logprobs: { content: { logprob: number; token: string; top_logprobs: unknown[] }[] }; finish_reason: string }[] };
  const tok = server.tokenizer;
  assert.deepEqual(r.prompt_token_ids, [tok.bosId, ...tok.encode("user: what is 2+2?\nassistant: ", { addSpecialTokens: false })]);
  const own = await engineSample([r.prompt_token_ids], { n: 3, seed: 7, temperature: 1, maxTokens: 12 });
  assert.equal(r.choices.length, 3);
  r.choices.forEach((c, j) => {
    assert.deepEqual(c.token_ids, Array.from(own[j]!.tokens));
    assert.equal(c.message.content, tok.decode(own[j]!.tokens));
    assert.deepEqual(c.logprobs.content.map((e) => e.logprob), Array.from(own[j]!.logprobs));
    assert.equal(c.logprobs.content[0]!.top_logprobs.length, 1);
    assert.equal(c.finish_reason, own[j]!.stopReason === "max_tokens" ? "length" : "stop");
  });
  assert.equal(res.usage!.prompt_tokens, r.prompt_token_ids.length);
});

test("completions: a list of token-id prompts is one engine call, choices prompt-major", async () => {
  const prompts = [[1, 10, 11, 12], [1, 20, 21]];
  const res = await client.completions.create({ model: MODEL, prompt: prompts, n: 2, seed: 11, temperature: 0.8, top_p: 0.9, max_tokens: 8, logprobs: 1, return_token_ids: true } as never);
  const own = await engineSample(prompts, { n: 2, seed: 11, temperature: 0.8, topP: 0.9, maxTokens: 8 });
  assert.equal(res.choices.length, 4);
  res.choices.forEach((c, i) => {
    const x = c as unknown as { token_ids: number[]; prompt_token_ids: number[] };
    assert.equal(c.index, i);
    assert.deepEqual(x.prompt_token_ids, prompts[Math.floor(i / 2)]);
    assert.deepEqual(x.token_ids, Array.from(own[i]!.tokens));
    assert.deepEqual(c.logprobs!.token_logprobs, Array.from(own[i]!.logprobs));
    assert.equal(c.text, server.tokenizer.decode(own[i]!.tokens));
  });
});

test("streaming chat and completions: the chunks add up to the non-streamed response", async () => {
  const req = { model: MODEL, messages: [{ role: "user" as const, content: "hi" }], seed: 3, temperature: 1, max_tokens: 10 };
  const whole = await client.chat.completions.create({ ...req, return_token_ids: true } as never) as unknown as { choices: { message: { content: string }; token_ids: number[]; finish_reason: string }[] };
  const stream = await client.chat.completions.create({ ...req, stream: true, stream_options: { include_usage: true }, return_token_ids: true } as never) as unknown as AsyncIterable<{ choices: { delta: { content?: string }; finish_reason: string | null; token_ids?: number[] }[]; usage?: { completion_tokens: number }; prompt_token_ids?: number[] }>;
  let text = "";
  const ids: number[] = [];
  let finish: string | null = null;
  let usage = 0;
  let promptIds = 0;
  for await (const ch of stream) {
    if (ch.prompt_token_ids) promptIds++;
    for (const c of ch.choices) {
      text += c.delta.content ?? "";
      ids.push(...(c.token_ids ?? []));
      finish = c.finish_reason ?? finish;
    }
    if (ch.usage) usage = ch.usage.completion_tokens;
  }
  assert.equal(text, whole.choices[0]!.message.content);
  assert.deepEqual(ids, whole.choices[0]!.token_ids);
  assert.equal(finish, whole.choices[0]!.finish_reason);
  assert.equal(usage, ids.length);
  assert.equal(promptIds, 1);

  const cWhole = await client.completions.create({ model: MODEL, prompt: "1+1=", seed: 5, max_tokens: 6 });
  const cStream = await client.completions.create({ model: MODEL, prompt: "1+1=", seed: 5, max_tokens: 6, stream: true });
  let ctext = "";
  for await (const ch of cStream) ctext += ch.choices[0]?.text ?? "";
  assert.equal(ctext, cWhole.choices[0]!.text);
});

test("stop strings cut the text before the stop and the token ids after the token that completed it", async () => {
  // Find a sampled response, then stop at its 3rd..4th characters.
  const base = await client.completions.create({ model: MODEL, prompt: "ab", seed: 9, temperature: 1, max_tokens: 12, return_token_ids: true } as never);
  const text = base.choices[0]!.text;
  assert.ok(text.length >= 5, `response "${text}" too short for the test`);
  const stop = text.slice(2, 4);
  const cut = await client.completions.create({ model: MODEL, prompt: "ab", seed: 9, temperature: 1, max_tokens: 12, stop: [stop, "@@"], return_token_ids: true } as never);
  const at = text.indexOf(stop);
  assert.equal(cut.choices[0]!.text, text.slice(0, at));
  assert.equal(cut.choices[0]!.finish_reason, "stop");
  const ids = (cut.choices[0] as unknown as { token_ids: number[] }).token_ids;
  assert.equal(server.tokenizer.decode(ids), text.slice(0, at + stop.length));
});

test("bad requests get OpenAI-shaped 4xx errors and the server keeps serving", async () => {
  const post = (path: string, body: string) => fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body });
  const shape = async (res: Response, status: number, param?: string | null) => {
    assert.equal(res.status, status);
    const b = (await res.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
    assert.deepEqual(Object.keys(b.error).sort(), ["code", "message", "param", "type"]);
    assert.equal(typeof b.error.message, "string");
    if (param !== undefined) assert.equal(b.error.param, param);
    return b.error;
  };
  // Malformed JSON.
  const e1 = await shape(await post("/chat/completions", "{not json"), 400);
  assert.equal(e1.code, "invalid_json");
  // Unknown model (the SDK raises its NotFoundError).
  await assert.rejects(client.chat.completions.create({ model: "gpt-9", messages: [{ role: "user", content: "hi" }] }), (e: unknown) => e instanceof OpenAI.NotFoundError && /does not exist/.test((e as Error).message));
  // Over-long prompt.
  const e3 = await shape(await post("/completions", JSON.stringify({ model: MODEL, prompt: "a".repeat(200), max_tokens: 4 })), 400, "prompt");
  assert.equal(e3.code, "context_length_exceeded");
  // Negative max_tokens, through the SDK too.
  await shape(await post("/chat/completions", JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: -3 })), 400, "max_tokens");
  await assert.rejects(client.completions.create({ model: MODEL, prompt: "hi", max_tokens: -1 }), OpenAI.BadRequestError);
  // Other junk: wrong types, empty messages, a character the tokenizer lacks, unknown route, empty body.
  await shape(await post("/chat/completions", JSON.stringify({ model: MODEL, messages: [] })), 400, "messages");
  await shape(await post("/chat/completions", JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "ÄÖ" }] })), 400, "messages");
  await shape(await post("/completions", JSON.stringify({ model: MODEL, prompt: [[1, 9999]] })), 400, "prompt");
  await shape(await post("/completions", JSON.stringify({ model: MODEL, prompt: "x", temperature: "hot" })), 400, "temperature");
  await shape(await post("/completions", "[1,2]"), 400);
  await shape(await post("/nope", "{}"), 404);
  // Still serving.
  const ok = await client.completions.create({ model: MODEL, prompt: "1+1=", max_tokens: 3 });
  assert.equal(ok.choices.length, 1);
});

test("200 concurrent requests (at most 50 in flight) are all answered, in batched engine calls", async () => {
  const before = { ...server.ctx.batcher.stats };
  const N = 200;
  const lat: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < N) {
      const i = next++;
      const t0 = performance.now();
      const r = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: `q ${i}` }], max_tokens: 8, temperature: 1 });
      lat.push(performance.now() - t0);
      assert.equal(r.choices.length, 1);
    }
  };
  await Promise.all(Array.from({ length: 50 }, worker));
  assert.equal(lat.length, N);
  const calls = server.ctx.batcher.stats.calls - before.calls;
  assert.ok(calls < N / 4, `expected batching: ${calls} engine calls for ${N} requests`);
});
