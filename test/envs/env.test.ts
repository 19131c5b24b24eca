// Environments as a rollout source (src/envs/, src/rollout/env.ts): turn structure, token-in/
// token-out masks and log-probs, rewards and group rewards, messageEnv's observation ids, the
// collect stage's env path and the config's env: block (fail closed).
import { test } from "node:test";
import assert from "node:assert/strict";
import { CharTokenizer } from "../../src/tokenizers/char.ts";
import { chatPromptIds } from "../../src/tokenizers/prompt.ts";
import { loadTokenizer } from "../../src/tokenizers/index.ts";
import { envRollouts } from "../../src/rollout/env.ts";
import { collectRollouts } from "../../src/rollout/collect.ts";
import { defineEnv, envGroup, getEnv, messageEnv, observationText, type Env } from "../../src/envs/index.ts";
import { generateExamples, getTask } from "../../src/tasks/index.ts";
import { parseRunConfig } from "../../src/config/schema.ts";
import { plainConfig } from "../../src/trainer/resume.ts";
import { ScriptedEngine } from "../rollout/fake-engine.ts";
import { CONSISTENT_REWARD as F, GUESS_ALPHABET, GuessEnv, secretOf } from "../../examples/guess/env.ts";

const tok = new CharTokenizer({ alphabet: GUESS_ALPHABET });
const id = (c: string) => tok.encode(c, { addSpecialTokens: false })[0]!;
const DIGITS = new Set("0123456789".split("").map(id));
// Linear search: guess 0, 1, 2, … (the number of digits so far), each followed by eos.
const linear = (prefix: readonly number[]) => (DIGITS.has(prefix[prefix.length - 1]!) ? tok.eosId : id(String(prefix.filter((t) => DIGITS.has(t)).length)));
const opts = { temperature: 1, seed: 7, maxTurns: 8, maxTokens: 64, maxSeqLen: 256, env: { name: "guess" } };

test("guess env: secrets are digits 0..9, spread over the slots", () => {
  const seen = new Set<number>();
  for (let i = 0; i < 200; i++) for (const split of ["train", "test"] as const) seen.add(secretOf(1, i, split));
  assert.deepEqual([...seen].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

test("guess env: turns, masks, log-probs and rewards of a linear-search policy", async () => {
  const engine = new ScriptedEngine(linear);
  const res = await envRollouts(engine, tok, [envGroup(2, () => new GuessEnv(tok, 2)), envGroup(1, () => new GuessEnv(tok, 7))], opts);
  assert.deepEqual(res.prompts.map((p) => Array.from(p)), [tok.encode("?"), tok.encode("?")]);
  const [a, b, c] = res.trajectories;
  // secret 2: "0<eos>" ">" "1<eos>" ">" "2<eos>" → found on turn 3.
  assert.equal(tok.decode(a!.tokens, { skipSpecial: false }), "0<eos>>1<eos>>2<eos>");
  assert.deepEqual(Array.from(a!.mask!), [1, 1, 0, 1, 1, 0, 1, 1]);
  assert.deepEqual(Array.from(a!.logprobs), [-0.5, -0.5, 0, -0.5, -0.5, 0, -0.5, -0.5]);
  assert.equal(a!.sampledTokens, 6);
  assert.equal(a!.stopReason, "completed");
  assert.deepEqual(b!.tokens, a!.tokens);
  assert.deepEqual([a!.promptIndex, b!.promptIndex, c!.promptIndex], [0, 0, 1]);
  // secret 7: four wrong guesses end the episode (the env's own limit): only the format rewards.
  assert.equal(tok.decode(c!.tokens, { skipSpecial: false }), "0<eos>>1<eos>>2<eos>>3<eos>");
  assert.deepEqual(res.verdicts.map((v) => [v.reward, v.correct]), [[2 * F + 1, true], [2 * F + 1, true], [4 * F, false]]);
  assert.equal(res.metrics["env/turns"], (3 + 3 + 4) / 3);
  assert.equal(res.metrics["env/found"], 2 / 3);
  // Every turn's prefix is the prompt plus the response so far (token-in/token-out).
  const last = engine.calls.at(-1)!.req.prompts[0]!;
  assert.deepEqual(Array.from(last), [...tok.encode("?"), ...Array.from(c!.tokens.slice(0, 9))]);
});

test("turn and token budgets end an episode; a malformed action ends it with the env's reward", async () => {
  const engine = new ScriptedEngine(linear);
  const turns = await envRollouts(engine, tok, [envGroup(1, () => new GuessEnv(tok, 9, 10))], { ...opts, maxTurns: 2 });
  assert.equal(turns.trajectories[0]!.stopReason, "max_turns");
  assert.equal(tok.decode(turns.trajectories[0]!.tokens, { skipSpecial: false }), "0<eos>>1<eos>", "the observation after the last allowed turn is not appended");
  const tokens = await envRollouts(engine, tok, [envGroup(1, () => new GuessEnv(tok, 9, 10))], { ...opts, maxTokens: 4 });
  assert.equal(tokens.trajectories[0]!.stopReason, "max_tokens");
  assert.ok(tokens.trajectories[0]!.tokens.length <= 4);
  const junk = await envRollouts(new ScriptedEngine(() => id("?")), tok, [envGroup(1, () => new GuessEnv(tok, 3))], opts);
  assert.equal(junk.trajectories[0]!.tokens.length, 2, "the turn's own cap (initialObservation.maxTokens 2)");
  assert.equal(junk.verdicts[0]!.reward, 0);
  assert.equal(junk.metrics["env/malformed"], 1);
});

test("group rewards are added once the group is done; env errors name the env", async () => {
  const engine = new ScriptedEngine(linear);
  const g = envGroup(2, (j) => new GuessEnv(tok, j === 0 ? 1 : 3), (eps) => eps.map((e) => -0.25 * e.turns));
  const res = await envRollouts(engine, tok, [g], opts);
  assert.deepEqual(res.verdicts.map((v) => v.reward), [F + 1 - 0.5, 3 * F + 1 - 1]);
  const bad: Env = { initialObservation: () => ({ tokens: [tok.bosId!], stopTokens: [tok.eosId] }), step: () => ({ reward: 0, done: false }) };
  await assert.rejects(envRollouts(engine, tok, [{ envs: [bad] }], { ...opts, env: { name: "bad" } }), /env "bad": step returned done: false without an observation/);
  const nan: Env = { ...bad, step: () => ({ reward: NaN, done: true }) };
  await assert.rejects(envRollouts(engine, tok, [{ envs: [nan] }], { ...opts, env: { name: "bad" } }), /reward NaN/);
  const other: Env = { ...bad, initialObservation: () => ({ tokens: [tok.bosId!, id("1")], stopTokens: [tok.eosId] }) };
  await assert.rejects(envRollouts(engine, tok, [{ envs: [bad, other] }], { ...opts, env: { name: "bad" } }), /different initial observations/);
  // An env may cut its episode at a limit of its own (the tool loop's call limit): the trajectory's stopReason.
  const cut = await envRollouts(engine, tok, [{ envs: [{ ...bad, step: () => ({ reward: 0.5, done: true, cut: "max_turns" }) }] }], opts);
  assert.equal(cut.trajectories[0]!.stopReason, "max_turns");
  assert.equal(cut.verdicts[0]!.reward, 0.5);
  const badCut = { ...bad, step: () => ({ reward: 0, done: true, cut: "tired" }) } as unknown as Env;
  await assert.rejects(envRollouts(engine, tok, [{ envs: [badCut] }], { ...opts, env: { name: "bad" } }), /env "bad": step returned cut "tired"/);
});

test("messageEnv: observation ids continue the chat exactly as the template renders it", async () => {
  const ct = new CharTokenizer({ alphabet: "abcdefghijklmnopqrstuvwxyz :\n" });
  const env = messageEnv(ct, {
    messages: [{ role: "user", content: "hi" }],
    reply: (text) => (text === "yo" ? { reward: 0, done: false, message: "more" } : { reward: 1, done: true }),
  });
  const init = await env.initialObservation();
  assert.deepEqual(Array.from(init.tokens), Array.from(chatPromptIds(ct, [{ role: "user", content: "hi" }])));
  const action = [...ct.encode("yo", { addSpecialTokens: false }), ct.eosId];
  const st = await env.step(action, { truncated: false });
  assert.equal(ct.decode(st.observation!), "\nuser: more\nassistant: ");
  // Prompt + reply (its eos aside) + observation = the whole chat rendered at once.
  const whole = chatPromptIds(ct, [{ role: "user", content: "hi" }, { role: "assistant", content: "yo" }, { role: "user", content: "more" }]);
  assert.deepEqual([...Array.from(init.tokens), ...action.slice(0, -1), ...st.observation!], Array.from(whole));
  assert.deepEqual(await env.step([...ct.encode("ok", { addSpecialTokens: false }), ct.eosId], { truncated: false }), { reward: 1, done: true });
  // A ChatML template (byte-level BPE fixture): the sampled <|im_end|> is not written again.
  const hf = await loadTokenizer(new URL("../fixtures/tokenizers/byte-bpe", import.meta.url).pathname);
  const chat = messageEnv(hf, { messages: [{ role: "user", content: "hi" }], reply: () => ({ reward: 0, done: false, message: "more" }) });
  const start = Array.from((await chat.initialObservation()).tokens);
  const reply = [...hf.encode("yo", { addSpecialTokens: false }), hf.eosId];
  const next = (await chat.step(reply, { truncated: false })).observation!;
  assert.equal(hf.decode(next, { skipSpecial: false }), "\n<|im_start|>user\nmore<|im_end|>\n<|im_start|>assistant\n");
  const all = chatPromptIds(hf, [{ role: "user", content: "hi" }, { role: "assistant", content: "yo" }, { role: "user", content: "more" }]);
  assert.deepEqual([...start, ...reply, ...next], Array.from(all));
  // A template that writes the end-of-turn the sampled stop id already wrote: not repeated.
  assert.equal(observationText("<s>u: hi</s><s>a: ", "<s>u: hi</s><s>a: yo</s>", "<s>u: hi</s><s>a: yo</s><s>u: x</s><s>a: ", "yo", "yo</s>"), "<s>u: x</s><s>a: ");
  assert.throws(() => observationText("A", "B", "C", "yo", "yo"), /not prefix-stable/);
});

test("collect stage: env slots become groups played through the run's sampler, scored by the env", async () => {
  const def = getEnv("guess");
  const examples = generateExamples(getTask("env:guess"), { n: 3, seed: 1, difficulty: 0, split: "train" });
  const engine = new ScriptedEngine(linear);
  const ctx = { engine, tokenizer: tok, verifyBatch: async () => assert.fail("an env's episodes are not verified by the reward block"), env: { def, seed: 1, maxTurns: 8 } };
  const r = { groupSize: 2, maxNewTokens: 32, temperature: 1 };
  const ro = await collectRollouts(ctx, r, examples, [], 5);
  assert.equal(ro.rollouts.length, 6);
  assert.deepEqual(ro.prompts!.map((p) => Array.from(p)), [0, 1, 2].map(() => tok.encode("?")));
  // Linear search finds secrets 0..3 (reward 1 plus a format reward per earlier guess), not the others (4 format rewards).
  for (const v of ro.verdicts) assert.ok(v.correct ? v.reward >= 1 : Math.abs(v.reward - 4 * F) < 1e-9, v.reason);
  await assert.rejects(collectRollouts(ctx, { ...r, agent: { enabled: true, tools: [], maxTurns: 1 } } as never, examples, [], 5), /config error at env: .*rl\.agent/);
});

const base = { model: { init: { hiddenSize: 16, numLayers: 1, numHeads: 2, maxPositionEmbeddings: 32 } }, tokenizer: { type: "char" as const, alphabet: GUESS_ALPHABET }, rl: { steps: 1 } };

test("config env: names a registered env; unknown names and data.task alongside fail in one line", () => {
  const cfg = parseRunConfig({ ...base, env: { name: "guess", maxTurns: 4 } }, "run.yaml");
  assert.equal(cfg.data.task, "env:guess");
  assert.equal(cfg.env!.maxTurns, 4);
  assert.throws(() => parseRunConfig({ ...base, env: { name: "gues" } }, "run.yaml"), (e: Error) => /^config error in run\.yaml at env\.name: unknown env "gues"; did you mean "guess"\?/.test(e.message) && !e.message.includes("\n"));
  assert.throws(() => parseRunConfig({ ...base, env: { name: "guess" }, data: { task: "addition" } }, "run.yaml"), /at data\.task: env: "guess" makes its own episodes/);
  assert.throws(() => parseRunConfig({ ...base, env: { name: "guess" }, reward: { verifier: "exact" } }, "run.yaml"), /at reward: /);
  assert.throws(() => parseRunConfig({ ...base, env: { name: "guess" }, data: { chat: true } }, "run.yaml"), /at data\.chat: does nothing with env: "guess"/);
  assert.throws(() => parseRunConfig({ ...base, env: { name: "guess" }, sft: { steps: 1, batchSize: 1, lr: 0.1 } }, "run.yaml"), /at sft: cannot be combined with env: "guess"/);
  assert.throws(() => parseRunConfig({ ...base, env: { name: "guess" }, rl: { steps: 1, verifierPool: { enabled: true } } }, "run.yaml"), /at rl\.verifierPool: does nothing/);
  // A run directory's config.yaml (resolved: data.task env:guess, every default written) parses again (--resume).
  const again = parseRunConfig(plainConfig(cfg), "runs/x/config.yaml");
  assert.deepEqual(again.env, cfg.env);
  assert.equal(again.data.task, "env:guess");
  assert.throws(() => defineEnv({ name: "guess", description: "", group: () => ({ envs: [] }) }), /already registered/);
  assert.throws(() => getTask("env:guess").verify("3", generateExamples(getTask("env:guess"), { n: 1, seed: 1, difficulty: 0, split: "train" })[0]!), /multi-turn/);
});

test("examples/guess/config.yaml loads: its plugin registers the env the env: block names", async () => {
  const { loadRunConfigFile } = await import("../../src/config/plugins.ts");
  const cfg = await loadRunConfigFile(new URL("../../examples/guess/config.yaml", import.meta.url).pathname);
  assert.equal(cfg.env!.name, "guess");
  assert.equal(cfg.data.task, "env:guess");
});

test("train() on an env: the RL step logs env metrics and held-out evaluation plays the test slots", async (t) => {
  const { mkdtempSync, readFileSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { train } = await import("../../src/index.ts");
  const out = mkdtempSync(join(tmpdir(), "rlvr-env-"));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const summary = await train(
    { ...base, out, env: { name: "guess", maxTurns: 4, maxTokens: 12 }, data: { trainSize: 100, testSize: 4 }, rl: { steps: 2, promptsPerStep: 2, groupSize: 2, maxNewTokens: 12, lr: 0.01 }, eval: { temperature: 0, maxNewTokens: 12 } },
    { quiet: true },
  );
  assert.equal(summary.after.prompts, 4);
  const rows = readFileSync(join(out, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r["stage"] === "rl");
  assert.equal(rows.length, 2);
  for (const r of rows) assert.ok(typeof r["env/turns"] === "number" && (r["env/turns"] as number) >= 1, JSON.stringify(r));
  const evals = readFileSync(join(out, "eval.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { label: string; prompts: number });
  assert.deepEqual(evals.map((e) => [e.label, e.prompts]), [["init", 4], ["rl", 4]]);
  // rlvr eval / evaluateCheckpoint plays the same held-out slots: the same greedy result.
  const { evaluateCheckpoint } = await import("../../src/index.ts");
  const again = await evaluateCheckpoint(summary.checkpoint);
  assert.equal(again.prompts, 4);
  assert.equal(again.accuracy, summary.after.accuracy);
  assert.equal(again.meanLength, summary.after.meanLength);
});

test("an env run resumed from a checkpoint logs the uninterrupted run's metrics", async (t) => {
  const { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { train } = await import("../../src/index.ts");
  const root = mkdtempSync(join(tmpdir(), "rlvr-env-resume-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const a = join(root, "a");
  const cfg = { ...base, out: a, env: { name: "guess", maxTurns: 4, maxTokens: 12 }, data: { trainSize: 100, testSize: 2 }, rl: { steps: 4, promptsPerStep: 2, groupSize: 2, maxNewTokens: 12, lr: 0.01 }, eval: { temperature: 0, maxNewTokens: 12 }, checkpoint: { every: 2, keepLast: 4 } };
  await train(cfg, { quiet: true });
  const b = join(root, "b");
  cpSync(a, b, { recursive: true });
  for (const d of readdirSync(join(b, "checkpoints"))) if (d !== "step-2") rmSync(join(b, "checkpoints", d), { recursive: true, force: true });
  const stages: string[] = [];
  await train({ ...cfg, out: b }, { quiet: true, resume: b, stage: (name, detail) => stages.push(`${name} ${detail ?? ""}`.trim()) });
  assert.ok(stages.some((s) => /^resume .*step-2/.test(s)), stages.join(" | "));
  const rl = (dir: string) =>
    readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r["stage"] === "rl").map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith("time") && !k.startsWith("throughput"))));
  assert.equal(rl(a).length, 4);
  assert.deepEqual(rl(b), rl(a));
});
