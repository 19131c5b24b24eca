// Capture mode: completions recorded by episode (header or metadata) with exact token ids, sampler
// log-probs and policy versions; scoring; one RL update between requests, with requests in flight
// finishing on the version they started with.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { EmbeddedEngine } from "../../src/engines/embedded/engine.ts";
import type { Engine, SampleRequest } from "../../src/core/engine.ts";
import { loadTokenizer } from "../../src/tokenizers/index.ts";
import { serve } from "../../src/serve/server.ts";
import type { Server } from "../../src/serve/context.ts";
import { episodesToSequences, trainServed } from "../../src/serve/train.ts";
import { makeTinyRun } from "./helpers.ts";

let root: string;
let server: Server;
let engine: Engine;
let client: OpenAI;
/** While set, engine.sample waits for it (to hold a call in flight). */
let gate: Promise<void> | null = null;
let started: () => void = () => {};

before(async () => {
  root = mkdtempSync(join(tmpdir(), "rlvr-capture-"));
  const run = await makeTinyRun(root, { hiddenSize: 32 });
  const dir = join(run, "checkpoints", "final");
  const tokenizer = await loadTokenizer(dir);
  engine = await EmbeddedEngine.fromPretrained(dir, { tokenizer, seed: 0 });
  const gated = new Proxy(engine, {
    get(t, k) {
      if (k === "sample") {
        return async (req: SampleRequest) => {
          started();
          if (gate) await gate;
          return t.sample(req);
        };
      }
      const v = (t as unknown as Record<string | symbol, unknown>)[k];
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
  server = await serve({ engine: gated, tokenizer, port: 0, capture: true, modelName: "tiny" });
  client = new OpenAI({ baseURL: server.url, apiKey: "unused", maxRetries: 0 });
});

after(async () => {
  await server?.close();
  await engine?.close();
  rmSync(root, { recursive: true, force: true });
});

const post = (path: string, body: unknown) => fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

test("a two-turn episode is recorded turn by turn with exact tokens, log-probs and versions", async () => {
  const h = { headers: { "x-rlvr-episode": "ep-1", "x-rlvr-group": "g" } };
  const r1 = (await client.chat.completions.create({ model: "tiny", messages: [{ role: "user", content: "hi" }], max_tokens: 6, return_token_ids: true, logprobs: true } as never, h)) as unknown as { prompt_token_ids: number[]; choices: { token_ids: number[]; message: { content: string }; logprobs: { content: { logprob: number }[] } }[] };
  const r2 = (await client.chat.completions.create({ model: "tiny", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: r1.choices[0]!.message.content }, { role: "user", content: "more" }], max_tokens: 6, return_token_ids: true } as never, h)) as unknown as typeof r1;
  const ep = server.episodes!.get("ep-1")!;
  assert.equal(ep.group, "g");
  assert.equal(ep.turns.length, 2);
  assert.deepEqual(ep.turns[0]!.promptTokens, r1.prompt_token_ids);
  assert.deepEqual(ep.turns[0]!.tokens, r1.choices[0]!.token_ids);
  assert.deepEqual(ep.turns[0]!.logprobs, r1.choices[0]!.logprobs.content.map((e) => e.logprob));
  assert.deepEqual(ep.turns[1]!.promptTokens, r2.prompt_token_ids);
  assert.deepEqual(ep.turns.map((t) => t.policyVersion), [0, 0]);
  // The loss trains only what the model generated: each turn's response, never its prompt.
  server.episodes!.reward("ep-1", 1);
  const { seqs } = episodesToSequences([server.episodes!.get("ep-1")!]);
  assert.deepEqual(seqs.map((s) => Array.from(s.response)), [r1.choices[0]!.token_ids, r2.choices[0]!.token_ids]);
  // metadata.episode_id works too (completions); GET shows the episode.
  await client.completions.create({ model: "tiny", prompt: "ab", max_tokens: 3, metadata: { episode_id: "ep-2" } } as never);
  const got = (await (await fetch(`${server.url}/rlvr/episodes/ep-2`)).json()) as { turns: unknown[]; group: string };
  assert.equal(got.turns.length, 1);
  assert.equal(got.group, "ep-2");
});

test("scoring: unknown episodes, bad rewards and n > 1 under capture are 4xx", async () => {
  assert.equal((await post("/rlvr/episodes/nope/reward", { reward: 1 })).status, 404);
  assert.equal((await post("/rlvr/episodes/ep-2/reward", { reward: "high" })).status, 400);
  assert.equal((await post("/rlvr/episodes/ep-2/reward", {})).status, 400);
  const ok = await post("/rlvr/episodes/ep-2/reward", { reward: 0.5 });
  assert.equal(ok.status, 200);
  assert.deepEqual(await ok.json(), { id: "ep-2", group: "ep-2", reward: 0.5, turns: 1 });
  await assert.rejects(client.chat.completions.create({ model: "tiny", messages: [{ role: "user", content: "x" }], n: 2 }, { headers: { "x-rlvr-episode": "ep-3" } }), OpenAI.BadRequestError);
  assert.throws(() => server.episodes!.reward("ep-2", Number.NaN), /finite/);
});

test("an update applies between requests; a request in flight finishes on the version it started with", async () => {
  // Episodes ep-1 and ep-2 are scored. Hold the next request's engine call, then ask for an update.
  let release!: () => void;
  gate = new Promise((r) => (release = r));
  const begun = new Promise<void>((r) => (started = r));
  const inFlight = client.completions.create({ model: "tiny", prompt: "ab", max_tokens: 3, metadata: { episode_id: "ep-4" } } as never) as unknown as Promise<{ rlvr: { policy_version: number } }>;
  await begun;
  const update = trainServed(server, { lr: 0.01 });
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(server.policyVersion, 0, "the update waits for the call in flight");
  gate = null;
  release();
  assert.equal((await inFlight).rlvr.policy_version, 0);
  const rep = (await update)!;
  assert.equal(rep.episodes, 2);
  assert.equal(rep.sequences, 3);
  assert.equal(rep.policyVersion, 1);
  assert.equal(rep.maxStaleness, 0);
  assert.ok(Number.isFinite(rep.metrics.loss!));
  assert.ok(Math.abs(rep.metrics["mismatch/logprob_gap"] ?? 0) < 1e-3, "sampler and trainer log-probs agree");
  // Later requests sample from the new weights and record it; the unscored episode stays.
  const after = (await client.completions.create({ model: "tiny", prompt: "ab", max_tokens: 3, metadata: { episode_id: "ep-4" } } as never)) as unknown as { rlvr: { policy_version: number } };
  assert.equal(after.rlvr.policy_version, 1);
  assert.deepEqual(server.episodes!.get("ep-4")!.turns.map((t) => t.policyVersion), [0, 1]);
  assert.equal(await trainServed(server), null, "nothing scored: no update");
  // Over HTTP.
  server.episodes!.reward("ep-4", 1);
  const res = await post("/rlvr/train", { lr: 0.01 });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { policyVersion: number; maxStaleness: number };
  assert.equal(body.policyVersion, 2);
  assert.equal(body.maxStaleness, 1, "ep-4's first turn was sampled one version before the update's start");
  assert.equal((await post("/rlvr/train", { lr: -1 })).status, 400);
});
