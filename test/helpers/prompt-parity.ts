// The prompt ids one example gets on each path that builds a prompt: training (the run context's
// encodePrompt), sampling (an OpenAI-compatible sampler posting them to a server), evaluation
// (`rlvr eval --endpoint`, whose ids reach the served engine) and serving (a chat request with the
// same messages to `rlvr serve`). Shared by the fixture test (test/tokenizers/prompt-parity.test.ts)
// and the real-model test (test/real/chat-parity.test.ts).
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { parseRunConfig } from "../../src/config/schema.ts";
import { buildContext } from "../../src/trainer/context.ts";
import { plainConfig } from "../../src/trainer/resume.ts";
import { serve } from "../../src/serve/server.ts";
import { OpenAISampler } from "../../src/rollout/samplers/openai.ts";
import { evalCheckpoint } from "../../src/cli/commands/eval.ts";
import type { Engine, SampleRequest } from "../../src/core/engine.ts";

export interface ParityCase {
  /** The dataset row (JSONL) training and evaluation read. */
  row: Record<string, unknown>;
  /** The chat a client sends to `rlvr serve` for the same example (system message included);
   *  empty: the row's text prompt goes to the completions endpoint instead. */
  messages: { role: string; content: string }[];
}

export interface ParityIds {
  train: number[][];
  sample: number[][];
  eval: number[][];
  serve: number[][];
}

/**
 * Prompt ids of `cases` in train, sample, eval and serve, for a tokenizer directory and a
 * `data:` block's chat settings. A tiny random model stands in for the weights (only the prompt
 * ids are compared).
 */
export async function promptIdsEverywhere(tokenizerDir: string, cases: ParityCase[], data: { chat: boolean; system?: string }): Promise<ParityIds> {
  const root = mkdtempSync(join(tmpdir(), "rlvr-parity-"));
  const file = join(root, "rows.jsonl");
  writeFileSync(file, cases.map((c) => JSON.stringify({ answer: "0", ...c.row })).join("\n") + "\n");
  const cfg = parseRunConfig({
    seed: 1,
    out: join(root, "run"),
    model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 256 } },
    tokenizer: { type: "hf", path: tokenizerDir },
    data: { train: file, test: file, verifier: "exact", ...data },
    rl: { steps: 1, promptsPerStep: 1, groupSize: 2, maxNewTokens: 2, lr: 0.001 },
  });
  const ctx = await buildContext(cfg);
  const seen: number[][] = [];
  const spy: Engine = Object.create(ctx.engine);
  spy.sample = (req: SampleRequest) => {
    seen.push(...req.prompts.map((p) => Array.from(p)));
    return ctx.engine.sample(req);
  };
  const server = await serve({ engine: spy, tokenizer: ctx.tokenizer, port: 0, modelName: "m" });
  try {
    const train = ctx.train.map((ex) => Array.from(ctx.encodePrompt(ex)));

    await new OpenAISampler({ baseURL: server.url, model: "m" }).sample({ prompts: ctx.train.map(ctx.encodePrompt), n: 1, maxNewTokens: 1, temperature: 0, seed: 1 });
    const sample = seen.splice(0);

    const ckpt = join(root, "run", "checkpoints", "final");
    mkdirSync(ckpt, { recursive: true });
    await ctx.tokenizer.save(ckpt);
    writeFileSync(join(root, "run", "config.yaml"), stringify(plainConfig(cfg)));
    const evalOpts = { data: file, verifier: "exact", n: cases.length, samples: 1, temperature: 0, topP: 1, maxNewTokens: 1, seed: 1, bootstrap: 0, level: 0.95, endpoint: server.url, model: "m" };
    await evalCheckpoint(ckpt, ctx.train, evalOpts);
    const evalIds = seen.splice(0);

    // Chats go to chat completions; text prompts (no messages) to completions.
    const servedIds: number[][] = [];
    for (const c of cases) {
      const chat = c.messages.length > 0;
      const body = chat ? { messages: c.messages } : { prompt: c.row.prompt };
      const r = await fetch(`${server.url}/${chat ? "chat/completions" : "completions"}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", ...body, max_tokens: 1, temperature: 0, return_token_ids: true }),
      });
      if (!r.ok) throw new Error(`serve: ${r.status} ${await r.text()}`);
      const j = (await r.json()) as { prompt_token_ids?: number[]; choices: { prompt_token_ids?: number[] }[] };
      servedIds.push((chat ? j.prompt_token_ids : j.choices[0]!.prompt_token_ids)!);
    }
    seen.splice(0);
    return { train, sample, eval: evalIds, serve: servedIds };
  } finally {
    await server.close();
    await ctx.close();
    rmSync(root, { recursive: true, force: true });
  }
}
