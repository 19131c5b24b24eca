// POST /v1/responses on a tiny random model: the JSON shape and the streamed event sequence over
// plain fetch, equal (greedy) to /v1/chat/completions on the same messages; unsupported fields
// are a 400 naming them; and the Vercel AI SDK's default provider call (`openai(model)` calls
// the Responses API) works for generateText and streamText, as does the openai SDK's responses.create.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText } from "ai";
import OpenAI from "openai";
import { serve } from "../../src/serve/server.ts";
import type { Server } from "../../src/serve/context.ts";
import { makeTinyRun } from "./helpers.ts";

let root: string;
let server: Server;
let client: OpenAI;
const MODEL = "tiny-run";

before(async () => {
  root = mkdtempSync(join(tmpdir(), "rlvr-responses-"));
  server = await serve({ checkpoint: await makeTinyRun(root, { maxPositionEmbeddings: 256 }), port: 0 });
  client = new OpenAI({ baseURL: server.url, apiKey: "unused", maxRetries: 0 });
});

after(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

const post = (body: unknown) => fetch(`${server.url}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** Greedy chat completion of `messages`: text, token ids, prompt ids, finish reason. */
async function chatGreedy(messages: { role: string; content: string }[], maxTokens: number) {
  const r = (await client.chat.completions.create({ model: MODEL, messages, temperature: 0, max_tokens: maxTokens, return_token_ids: true } as never)) as unknown as { prompt_token_ids: number[]; choices: { message: { content: string }; token_ids: number[]; finish_reason: string }[] };
  const c = r.choices[0]!;
  assert.ok(c.message.content.length > 0, "the tiny model's greedy reply is empty: the comparisons would prove nothing");
  return { text: c.message.content, tokens: c.token_ids, prompt: r.prompt_token_ids, finish: c.finish_reason };
}

test("JSON shape: instructions + message items render as the same chat, usage counts its tokens", async () => {
  const chat = await chatGreedy([{ role: "system", content: "be brief" }, { role: "user", content: "what is 2+2?" }, { role: "assistant", content: "4" }, { role: "user", content: "and 3+3?" }], 12);
  const res = await post({ model: MODEL, instructions: "be brief", input: [{ role: "user", content: "what is 2+2?" }, { type: "message", role: "assistant", content: [{ type: "output_text", text: "4", annotations: [] }], id: "msg_1", status: "completed" }, { role: "user", content: [{ type: "input_text", text: "and 3+3?" }] }], temperature: 0, max_output_tokens: 12, tools: [], store: false });
  assert.equal(res.status, 200);
  const r = (await res.json()) as Record<string, any>;
  assert.match(r.id, /^resp_[0-9a-f]{24}$/);
  assert.equal(r.object, "response");
  assert.equal(typeof r.created_at, "number");
  assert.equal(r.model, MODEL);
  assert.equal(r.instructions, "be brief");
  assert.equal(r.output.length, 1);
  const m = r.output[0];
  assert.equal(m.type, "message");
  assert.equal(m.role, "assistant");
  assert.match(m.id, /^msg_/);
  assert.deepEqual(m.content, [{ type: "output_text", text: chat.text, annotations: [], logprobs: [] }]);
  assert.deepEqual(r.usage, { input_tokens: chat.prompt.length, input_tokens_details: { cached_tokens: 0 }, output_tokens: chat.tokens.length, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: chat.prompt.length + chat.tokens.length });
  assert.equal(r.status, chat.finish === "length" ? "incomplete" : "completed");
  assert.deepEqual(r.incomplete_details, chat.finish === "length" ? { reason: "max_output_tokens" } : null);
  assert.equal(r.max_output_tokens, 12);
});

test("streaming over fetch: the Responses API's event sequence, deltas joining to the text", async () => {
  const chat = await chatGreedy([{ role: "user", content: "hi" }], 10);
  const res = await post({ model: MODEL, input: "hi", temperature: 0, max_output_tokens: 10, stream: true });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type")!, /^text\/event-stream/);
  const blocks = (await res.text()).trim().split("\n\n");
  const events = blocks.map((b) => {
    const [ev, data] = b.split("\n");
    const e = JSON.parse(data!.replace(/^data: /, "")) as Record<string, any>;
    assert.equal(ev, `event: ${e.type}`);
    return e;
  });
  const types = events.map((e) => e.type as string).filter((t, i, a) => t !== "response.output_text.delta" || a[i - 1] !== t);
  const end = chat.finish === "length" ? "response.incomplete" : "response.completed";
  assert.deepEqual(types, ["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", end]);
  assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, k) => k));
  const deltas = events.filter((e) => e.type === "response.output_text.delta");
  assert.equal(deltas.map((e) => e.delta).join(""), chat.text);
  assert.equal(events.at(-1)!.response.output[0].content[0].text, chat.text);
  assert.equal(events[0]!.response.status, "in_progress");
});

test("log-probs (include message.output_text.logprobs): the sampled tokens', equal to chat's, streamed per token", async () => {
  const messages = [{ role: "user" as const, content: "hi" }];
  const chat = (await client.chat.completions.create({ model: MODEL, messages, temperature: 0, max_tokens: 8, logprobs: true, top_logprobs: 1 })).choices[0]!.logprobs!.content!;
  const req = { model: MODEL, input: "hi", temperature: 0, max_output_tokens: 8, include: ["message.output_text.logprobs"], top_logprobs: 1 };
  const r = (await (await post(req)).json()) as { output: { content: { logprobs: { token: string; logprob: number; bytes: number[]; top_logprobs: unknown[] }[] }[] }[] };
  const lps = r.output[0]!.content[0]!.logprobs;
  assert.deepEqual(lps.map((e) => [e.token, e.logprob]), chat.map((e) => [e.token, e.logprob]));
  assert.deepEqual(lps[0]!.top_logprobs, [{ token: lps[0]!.token, logprob: lps[0]!.logprob, bytes: lps[0]!.bytes }]);
  const events = (await (await post({ ...req, stream: true })).text()).trim().split("\n\n").map((b) => JSON.parse(b.split("\n")[1]!.slice(6)) as { type: string; logprobs?: { logprob: number }[] });
  const streamed = events.filter((e) => e.type === "response.output_text.delta").flatMap((e) => e.logprobs!.map((x) => x.logprob));
  assert.deepEqual(streamed, chat.map((e) => e.logprob));
  // Without the include, none.
  const plain = (await (await post({ ...req, include: undefined })).json()) as typeof r;
  assert.deepEqual(plain.output[0]!.content[0]!.logprobs, []);
});

test("unsupported fields and items are a 400 naming them; the server keeps serving", async () => {
  const base = { model: MODEL, input: "hi", max_output_tokens: 2 };
  const cases: [Record<string, unknown>, string][] = [
    [{ ...base, tools: [{ type: "function", name: "calc", parameters: {} }] }, "tools"],
    [{ ...base, previous_response_id: "resp_123" }, "previous_response_id"],
    [{ ...base, background: true }, "background"],
    [{ ...base, store: true }, "store"],
    [{ ...base, include: ["reasoning.encrypted_content"] }, "include.0"],
    [{ ...base, reasoning: { effort: "low" } }, "reasoning"],
    [{ ...base, frobnicate: 1 }, "frobnicate"],
    [{ ...base, toString: 1 }, "toString"],
    [{ ...base, input: [{ type: "function_call_output", call_id: "c", output: "5" }] }, "input.0.type"],
    [{ ...base, input: [{ role: "user", content: [{ type: "input_image", image_url: "http://x" }] }] }, "input.0.content.0.type"],
    [{ ...base, input: [] }, "input"],
    [{ ...base, max_output_tokens: 0 }, "max_output_tokens"],
  ];
  for (const [body, param] of cases) {
    const res = await post(body);
    const e = ((await res.json()) as { error: { param: string; message: string } }).error;
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(e.param, param, e.message);
    assert.ok(e.message.includes(param.split(".")[0]!), e.message);
  }
  assert.equal((await post({ ...base, model: "other" })).status, 404);
  assert.equal((await post(base)).status, 200);
});

test("the Vercel AI SDK's default openai(model) — generateText and streamText — and openai.responses.create", async () => {
  const openai = createOpenAI({ baseURL: server.url, apiKey: "unused" });
  const chat = await chatGreedy([{ role: "user", content: "what is 1+1?" }], 8);
  const g = await generateText({ model: openai(MODEL), prompt: "what is 1+1?", temperature: 0, maxOutputTokens: 8, maxRetries: 0 });
  assert.equal(g.text, chat.text);
  assert.equal(g.finishReason, chat.finish === "length" ? "length" : "stop");
  assert.equal(g.usage.inputTokens, chat.prompt.length);
  assert.equal(g.usage.outputTokens, chat.tokens.length);
  assert.match(g.response.id, /^resp_/);
  const withLp = await generateText({ model: openai(MODEL), prompt: "what is 1+1?", temperature: 0, maxOutputTokens: 8, maxRetries: 0, providerOptions: { openai: { logprobs: true } } });
  const lp = (withLp.providerMetadata!.openai!.logprobs as { logprob: number }[][])[0]!;
  assert.equal(lp.length, chat.tokens.length);
  assert.ok(lp.every((e) => Number.isFinite(e.logprob) && e.logprob <= 0));

  const s = streamText({ model: openai(MODEL), system: "be brief", prompt: "what is 1+1?", temperature: 0, maxOutputTokens: 8, maxRetries: 0 });
  let streamed = "";
  for await (const piece of s.textStream) streamed += piece;
  const sys = await chatGreedy([{ role: "system", content: "be brief" }, { role: "user", content: "what is 1+1?" }], 8);
  assert.equal(streamed, sys.text);
  assert.equal(await s.finishReason, sys.finish === "length" ? "length" : "stop");
  assert.equal((await s.usage).outputTokens, sys.tokens.length);

  // Multi-turn with the SDK's own messages: sent as text with store: false; by default the SDK
  // sends earlier replies as references to stored items, which this server refuses by name.
  const turns = [{ role: "user" as const, content: "what is 1+1?" }, ...g.response.messages, { role: "user" as const, content: "and 2+2?" }];
  const two = await generateText({ model: openai(MODEL), messages: turns, temperature: 0, maxOutputTokens: 8, maxRetries: 0, providerOptions: { openai: { store: false } } });
  assert.equal(two.text, (await chatGreedy([{ role: "user", content: "what is 1+1?" }, { role: "assistant", content: g.text }, { role: "user", content: "and 2+2?" }], 8)).text);
  await assert.rejects(generateText({ model: openai(MODEL), messages: turns, temperature: 0, maxOutputTokens: 8, maxRetries: 0 }), /input\.1\.type "item_reference" is not supported/);

  const r = await client.responses.create({ model: MODEL, input: "what is 1+1?", temperature: 0, max_output_tokens: 8 });
  assert.equal(r.output_text, chat.text);
  let streamedSdk = "";
  for await (const e of await client.responses.create({ model: MODEL, input: "what is 1+1?", temperature: 0, max_output_tokens: 8, stream: true })) {
    if (e.type === "response.output_text.delta") streamedSdk += e.delta;
  }
  assert.equal(streamedSdk, chat.text);
});

test("capture mode records a /v1/responses call under its episode, with the chat prompt's ids", async () => {
  const cap = await serve({ checkpoint: join(root, "tiny-run"), port: 0, capture: true });
  try {
    const chat = await chatGreedy([{ role: "system", content: "be brief" }, { role: "user", content: "hi" }], 6);
    const res = await fetch(`${cap.url}/responses`, { method: "POST", headers: { "content-type": "application/json", "x-rlvr-episode": "ep-r" }, body: JSON.stringify({ model: MODEL, instructions: "be brief", input: "hi", temperature: 0, max_output_tokens: 6 }) });
    const r = (await res.json()) as { output: { content: { text: string }[] }[]; usage: { output_tokens: number } };
    const turns = cap.episodes!.get("ep-r")!.turns;
    assert.equal(turns.length, 1);
    assert.deepEqual(turns[0]!.promptTokens, chat.prompt);
    assert.deepEqual(turns[0]!.tokens, chat.tokens);
    assert.equal(r.output[0]!.content[0]!.text, chat.text);
    assert.equal(r.usage.output_tokens, turns[0]!.tokens.length);
  } finally {
    await cap.close();
  }
});
