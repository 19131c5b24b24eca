import { test } from "node:test";
import assert from "node:assert/strict";
import { agentRollouts, closeTokenIds, formatObservation, parseToolCall, toolDemonstration, ToolEnv } from "../../src/rollout/agent.ts";
import { calculatorTool, defaultTools, ToolRegistry } from "../../src/rollout/tools/registry.ts";
import { runCodeTool } from "../../src/rollout/tools/code.ts";
import { sandboxSupport } from "../../src/rewards/code/probe.ts";
import { packSequences } from "../../src/core/sequence.ts";
import { CharTokenizer } from "../../src/tokenizers/char.ts";
import { ScriptedEngine, tok } from "./fake-engine.ts";

const prompts = ["2*3=", "12+30="].map((s) => Int32Array.from([tok.bosId!, ...tok.encode(s, { addSpecialTokens: false })]));
const promptLen = (prefix: readonly number[]) => prefix.indexOf(tok.encode("=", { addSpecialTokens: false })[0]!) + 1;
const calcOnly = new ToolRegistry().register(calculatorTool);

test("parseToolCall: a complete call of a registered tool at the end of the turn", () => {
  assert.deepEqual(parseToolCall("<calc>2*3</calc>", calcOnly), { name: "calc", input: "2*3" });
  assert.deepEqual(parseToolCall("think <calc>2 * (3+1)</calc>\n", calcOnly), { name: "calc", input: "2 * (3+1)" });
  assert.equal(parseToolCall("<calc>", calcOnly), null);
  assert.equal(parseToolCall("<calc>2*3</calc> more", calcOnly), null);
  assert.equal(parseToolCall("<calc>2*3</calx>", calcOnly), null);
  assert.equal(parseToolCall("<foo>1</foo>", calcOnly), null);
  assert.deepEqual(closeTokenIds(tok), tok.encode(">", { addSpecialTokens: false }));
});

test("agent loop: token-in/token-out — the response is the sampled ids and observation ids concatenated; observations masked", async () => {
  // The "model" calls the calculator on the prompt's expression, then copies the observation.
  const exprs = ["2*3", "12+30"];
  const engine2 = new ScriptedEngine((prefix) => {
    const P = promptLen(prefix);
    const resp = tok.decode(prefix.slice(P));
    const e = tok.decode(prefix.slice(1, P - 1));
    const i = resp.indexOf("</out>");
    const target = i >= 0 ? resp.slice(0, i + 6) + /<out>([^<]*)<\/out>/.exec(resp)![1] : `<calc>${e}</calc>`;
    return target.startsWith(resp) && target.length > resp.length ? tok.encode(target[resp.length]!, { addSpecialTokens: false })[0]! : tok.eosId;
  });
  const res = await agentRollouts(engine2, tok, prompts, { tools: calcOnly, groupSize: 2, maxTurns: 3, maxTokens: 40, temperature: 1, seed: 3 });
  assert.equal(res.trajectories.length, 4);
  const want = ["6", "42"];
  res.trajectories.forEach((t) => {
    const text = tok.decode(t.tokens);
    assert.equal(text, `<calc>${exprs[t.promptIndex]}</calc><out>${want[t.promptIndex]}</out>${want[t.promptIndex]}`);
    assert.equal(t.stopReason, "completed");
    assert.equal(t.toolCalls, 1);
    assert.equal(t.answerText, want[t.promptIndex]);
    // Mask 0 exactly on the observation "<out>…</out>".
    const obsStart = `<calc>${exprs[t.promptIndex]}</calc>`.length;
    const obsLen = `<out>${want[t.promptIndex]}</out>`.length;
    t.mask!.forEach((m, i) => assert.equal(m, i >= obsStart && i < obsStart + obsLen ? 0 : 1, `position ${i}`));
    t.logprobs.forEach((lp, i) => assert.equal(lp, t.mask![i] ? -0.5 : 0));
    assert.equal(t.sampledTokens, t.tokens.length - obsLen);
    const b = packSequences([{ prompt: prompts[t.promptIndex]!, response: t.tokens, mask: t.mask }]);
    const P = prompts[t.promptIndex]!.length;
    for (let i = 0; i < t.tokens.length; i++) assert.equal(b.lossMask[P + i], t.mask![i]);
  });
  // Token-in/token-out: every engine call's prompt is the prompt ids + the row's response ids so far,
  // and each trajectory is the concatenation of what the engine returned and the observation ids.
  for (let row = 0; row < 4; row++) {
    const t = res.trajectories[row]!;
    const p = prompts[t.promptIndex]!;
    const pieces: number[] = [];
    for (const c of engine2.calls) {
      c.req.prompts.forEach((pr, i) => {
        const arr = Array.from(pr);
        const full = [...p, ...t.tokens];
        if (arr.length >= p.length && String(full.slice(0, arr.length)) === String(arr) && arr.length - p.length === pieces.length) {
          pieces.push(...c.results[i]!.tokens);
          if (pieces.length < t.tokens.length && c.results[i]!.tokens.at(-1) === tok.encode(">", { addSpecialTokens: false })[0] && /<\/calc>$/.test(tok.decode(pieces))) {
            pieces.push(...tok.encode(`<out>${want[t.promptIndex]}</out>`, { addSpecialTokens: false }));
          }
        }
      });
    }
    assert.deepEqual(pieces, Array.from(t.tokens), `row ${row}`);
  }
});

test("agent loop: the turn limit ends a trajectory with max_turns; tool errors become observations; max_tokens", async () => {
  // A model that always calls the calculator again, on a bad expression every other time.
  const engine = new ScriptedEngine((prefix) => {
    const P = promptLen(prefix);
    const resp = tok.decode(prefix.slice(P));
    const k = (resp.match(/<\/out>/g) ?? []).length;
    const target = resp.slice(0, k ? resp.lastIndexOf("</out>") + 6 : 0) + (k % 2 ? "<calc>1/0</calc>" : "<calc>1+1</calc>");
    return target.startsWith(resp) && target.length > resp.length ? tok.encode(target[resp.length]!, { addSpecialTokens: false })[0]! : tok.eosId;
  });
  const res = await agentRollouts(engine, tok, prompts.slice(0, 1), { tools: calcOnly, groupSize: 1, maxTurns: 2, maxTokens: 200, temperature: 1, seed: 1 });
  const t = res.trajectories[0]!;
  assert.equal(t.stopReason, "max_turns");
  assert.equal(t.toolCalls, 2);
  // The observation "error: division by zero" loses the characters outside this char alphabet.
  assert.equal(tok.decode(t.tokens), "<calc>1+1</calc><out>2</out><calc>1/0</calc><out>error: o y zero</out><calc>1+1</calc>");
  assert.equal(res.metrics["agent/tool_errors"], 1);
  assert.equal(res.metrics["stop/max_turns"], 1);
  // A token cap cuts the same loop short.
  const short = await agentRollouts(engine, tok, prompts.slice(0, 1), { tools: calcOnly, groupSize: 1, maxTurns: 5, maxTokens: 20, temperature: 1, seed: 1 });
  assert.equal(short.trajectories[0]!.stopReason, "max_tokens");
  assert.ok(short.trajectories[0]!.tokens.length <= 20);
});

test("tool registry: user tools, name checks, unknown names; the code runner tool runs in the sandbox", async (t) => {
  const reg = new ToolRegistry().register({ name: "upper", description: "upper-case", run: (s) => s.toUpperCase() });
  assert.equal(await reg.get("upper")!.run("abc"), "ABC");
  assert.throws(() => reg.register({ name: "upper", description: "", run: () => "" }), /already registered/);
  assert.throws(() => reg.register({ name: "bad name", description: "", run: () => "" }), /must match/);
  assert.throws(() => defaultTools.pick(["calc", "nope"]), /unknown tool "nope"/);
  assert.deepEqual(defaultTools.pick(["calc"]).names(), ["calc"]);
  if (!sandboxSupport().python) return t.skip("no python3 for the sandbox");
  assert.equal(await runCodeTool("print(6*7)", "python"), "42");
  assert.match(await runCodeTool("raise ValueError('boom')", "python"), /^error: .*boom/);
});

test("toolDemonstration: SFT demonstrations have exactly the agent loop's token layout (ids and loss mask)", async () => {
  for (const [p, segments] of [
    [0, ["<calc>2*3</calc>", "6"]],
    [1, ["<calc>12+30</calc>", "<calc>42*2</calc>", "84"]],
    [0, ["<calc>1/0</calc>", "0"]],
  ] as const) {
    const demo = await toolDemonstration(tok, calcOnly, segments);
    assert.equal(demo.response.at(-1), tok.eosId);
    // A model that writes the demonstration's sampled characters (mask 1), one at a time.
    const written = tok.decode(demo.response.filter((_, i) => demo.mask[i] === 1));
    const engine = new ScriptedEngine((prefix) => {
      const resp = prefix.slice(promptLen(prefix));
      const sampledSoFar = tok.decode(resp.filter((_, i) => i >= demo.mask.length || demo.mask[i] === 1));
      return sampledSoFar.length < written.length ? tok.encode(written[sampledSoFar.length]!, { addSpecialTokens: false })[0]! : tok.eosId;
    });
    const res = await agentRollouts(engine, tok, [prompts[p]!], { tools: calcOnly, groupSize: 1, maxTurns: 3, maxTokens: 80, temperature: 0, seed: 1 });
    const t = res.trajectories[0]!;
    assert.equal(t.stopReason, "completed");
    assert.deepEqual(Array.from(t.tokens), demo.response, segments.join(" | "));
    assert.deepEqual(Array.from(t.mask!), demo.mask);
  }
  assert.deepEqual(await toolDemonstration(tok, calcOnly, ["42"], { eos: false }), { response: tok.encode("42", { addSpecialTokens: false }), mask: [1, 1] });
  await assert.rejects(toolDemonstration(tok, calcOnly, ["<calc>2*3", "6"]), /must end with a call/);
});

test("observations are inserted literally: $-patterns in a tool's output are not expanded", async () => {
  assert.equal(formatObservation("<out>{}</out>", "a$&b$'c$$"), "<out>a$&b$'c$$</out>");
  const t2 = new CharTokenizer({ alphabet: "0123456789=<>/aceholtu$&'" });
  const tools = new ToolRegistry().register({ name: "echo", description: "echo", run: () => "$&$'" });
  const written = "<echo>1</echo>";
  const p = Int32Array.from([t2.bosId!, ...t2.encode("1=", { addSpecialTokens: false })]);
  const engine = new ScriptedEngine((prefix) => {
    const resp = t2.decode(prefix.slice(p.length));
    const k = resp.indexOf("</out>");
    return k < 0 && resp.length < written.length ? t2.encode(written[resp.length]!, { addSpecialTokens: false })[0]! : t2.eosId;
  });
  const res = await agentRollouts(engine, t2, [p], { tools, groupSize: 1, maxTurns: 1, maxTokens: 60, temperature: 0, seed: 1 });
  assert.equal(t2.decode(res.trajectories[0]!.tokens), "<echo>1</echo><out>$&$'</out>");
});

test("the tool loop is an Env: each step reads the turn since the last observation", async () => {
  const ids = (s: string) => tok.encode(s, { addSpecialTokens: false });
  const env = new ToolEnv(tok, prompts[0]!, { tools: calcOnly, maxTurns: 1 });
  const init = env.initialObservation();
  assert.deepEqual(init.tokens, Array.from(prompts[0]!));
  assert.deepEqual(init.stopTokens, [tok.eosId, ...closeTokenIds(tok)]);
  // The ">" of an opening tag closes no call: sample on (empty observation); so does a turn cut at its cap.
  assert.deepEqual(await env.step(ids("<calc>"), { truncated: false }), { reward: 0, done: false, observation: [] });
  assert.deepEqual(await env.step(ids("2*3</c"), { truncated: true }), { reward: 0, done: false, observation: [] });
  // The turn so far ("<calc>2*3</calc>") is a call: it runs, and the observation follows.
  assert.deepEqual(await env.step(ids("alc>"), { truncated: false }), { reward: 0, done: false, observation: ids("<out>6</out>") });
  assert.equal(env.calls, 1);
  // A call past maxTurns cuts the episode; end-of-sequence ends it.
  assert.deepEqual(await env.step(ids("<calc>1+1</calc>"), { truncated: false }), { reward: 0, done: true, cut: "max_turns" });
  assert.deepEqual(await env.step([...ids("6"), tok.eosId], { truncated: false }), { reward: 0, done: true });
});

test("agent loop: with a sampler apart from the trainer (vLLM, a server, rl.async's worker) every turn is sampled there", async () => {
  const script = (prefix: readonly number[]) => {
    const resp = tok.decode(prefix.slice(promptLen(prefix)));
    const target = resp.includes("</out>") ? resp.slice(0, resp.indexOf("</out>") + 6) + "6" : "<calc>2*3</calc>";
    return target.startsWith(resp) && target.length > resp.length ? tok.encode(target[resp.length]!, { addSpecialTokens: false })[0]! : tok.eosId;
  };
  const trainer = new ScriptedEngine(() => tok.eosId);
  const sampler = new ScriptedEngine(script);
  const res = await agentRollouts(trainer, tok, prompts.slice(0, 1), { tools: calcOnly, groupSize: 1, maxTurns: 2, maxTokens: 40, temperature: 1, seed: 1, sampler });
  assert.equal(tok.decode(res.trajectories[0]!.tokens), "<calc>2*3</calc><out>6</out>6");
  assert.equal(trainer.calls.length, 0, "the trainer engine samples nothing");
  assert.equal(sampler.calls.length, res.metrics["agent/engine_calls"]);
});
