// Tools through the openai SDK: an engine that answers with a <tool_call> block (tiny random
// models never do) is served; the SDK sees OpenAI tool_calls, streamed or not, and a follow-up
// turn with the tool's result re-renders the call in the same convention.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import type { Engine, SampleRequest, SampleResult } from "../../src/core/engine.ts";
import { CharTokenizer } from "../../src/tokenizers/index.ts";
import { serve } from "../../src/serve/server.ts";
import type { Server } from "../../src/serve/context.ts";
import { ALPHABET } from "./helpers.ts";

const tokenizer = new CharTokenizer({ alphabet: ALPHABET + "ABCDEFGHIJKLMNOPQRSTUVWXYZ()[]" });
const CALL = '<tool_call>{"name": "calc", "arguments": {"expr": "2+3"}}</tool_call>';
const prompts: number[][] = [];

/** An engine whose every sample is CALL then EOS (log-prob -0.5 per token). */
const engine: Engine = {
  info: () => ({ engine: "scripted", modelId: "scripted", vocabSize: tokenizer.vocabSize, maxSeqLen: 4096, numParams: 0, device: "cpu", dtype: "float32" }),
  sample: async (req: SampleRequest): Promise<SampleResult[]> => {
    const ids = [...tokenizer.encode(CALL, { addSpecialTokens: false }), tokenizer.eosId];
    prompts.push(...req.prompts.map((p) => Array.from(p)));
    return req.prompts.flatMap((_, i) => Array.from({ length: req.n }, () => ({ promptIndex: i, tokens: Int32Array.from(ids), logprobs: new Float32Array(ids.length).fill(-0.5), stopReason: "completed" as const })));
  },
  score: async () => { throw new Error("not used"); },
  forwardBackward: async () => { throw new Error("not used"); },
  optimStep: async () => { throw new Error("not used"); },
  setReference: async () => {},
  save: async () => {},
  load: async () => {},
  close: async () => {},
};

let server: Server;
let client: OpenAI;
before(async () => {
  server = await serve({ engine, tokenizer, port: 0, modelName: "scripted" });
  client = new OpenAI({ baseURL: server.url, apiKey: "unused", maxRetries: 0 });
});
after(async () => server?.close());

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [{ type: "function", function: { name: "calc", description: "evaluate", parameters: { type: "object", properties: { expr: { type: "string" } } } } }];

test("tool calls come back in the OpenAI format, and the follow-up turn renders them", async () => {
  const r = await client.chat.completions.create({ model: "scripted", messages: [{ role: "user", content: "what is 2+3?" }], tools });
  const c = r.choices[0]!;
  assert.equal(c.finish_reason, "tool_calls");
  assert.equal(c.message.content, null);
  assert.equal(c.message.tool_calls!.length, 1);
  const call = c.message.tool_calls![0]! as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
  assert.equal(call.function.name, "calc");
  assert.deepEqual(JSON.parse(call.function.arguments), { expr: "2+3" });
  // The tools were described to the model (no template: a system message with the convention).
  assert.match(tokenizer.decode(prompts.at(-1)!), /^system: You may call these tools:\n\{"name":"calc"/);
  // Follow-up: the assistant's call and the tool's result are in the next prompt.
  await client.chat.completions.create({ model: "scripted", messages: [{ role: "user", content: "what is 2+3?" }, c.message, { role: "tool", tool_call_id: call.id, content: "5" }], tools });
  const text = tokenizer.decode(prompts.at(-1)!);
  assert.ok(text.includes('assistant: <tool_call>{"name":"calc","arguments":{"expr":"2+3"}}</tool_call>\ntool: 5\nassistant: '), text);
  // tool_choice "none": no parsing, the text comes back as content.
  const none = await client.chat.completions.create({ model: "scripted", messages: [{ role: "user", content: "hi" }], tools, tool_choice: "none" });
  assert.equal(none.choices[0]!.message.content, CALL);
  assert.equal(none.choices[0]!.finish_reason, "stop");
});

test("streamed tool calls", async () => {
  const stream = await client.chat.completions.create({ model: "scripted", messages: [{ role: "user", content: "what is 2+3?" }], tools, stream: true });
  const calls: { name?: string; arguments?: string }[] = [];
  let finish: string | null = null;
  for await (const ch of stream) {
    for (const c of ch.choices) {
      for (const t of c.delta.tool_calls ?? []) calls.push({ name: t.function?.name, arguments: t.function?.arguments });
      finish = c.finish_reason ?? finish;
    }
  }
  assert.equal(finish, "tool_calls");
  assert.equal(calls.length, 1);
  assert.equal(calls[0]!.name, "calc");
  assert.deepEqual(JSON.parse(calls[0]!.arguments!), { expr: "2+3" });
});
