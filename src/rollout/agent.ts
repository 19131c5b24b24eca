/**
 * Multi-turn tool use: an agent loop that samples, runs the tools the model calls, appends their
 * output as observation tokens and samples on, up to a turn limit.
 *
 * Call syntax: `<name>input</name>` where `name` is a registered tool (./tools/registry.ts), e.g.
 * `<calc>12*7-30</calc>`. The loop samples with the end-of-sequence id and every token whose text
 * contains ">" as stop tokens; at each stop on ">" it checks whether the current turn's text ends
 * with a complete call (`<name>…</name>`, trailing whitespace allowed) of a registered tool. If so it
 * runs the tool and appends the observation `<out>RESULT</out>` (or `<out>error: MESSAGE</out>`;
 * format configurable); otherwise (e.g. the ">" of an opening tag) it just samples on. Text in
 * tags that are not registered tools is ordinary text.
 *
 * Token-in/token-out: the trajectory's response is the concatenation, in order, of the token ids
 * the engine sampled and the observation ids (`tokenizer.encode(observation)`); earlier turns are
 * never decoded and re-encoded — each turn's prefix is the prompt ids plus the response ids so far.
 * Observation tokens carry loss mask 0 and old log-prob 0; sampled tokens mask 1.
 *
 * Ends (stopReason): `completed` (end-of-sequence sampled), `max_tokens` (the response reached
 * `maxTokens` tokens — sampled plus observations — or the model's length, or an observation did not
 * fit), `max_turns` (the model made a call after `maxTurns` calls had run; it is not run).
 *
 * The text the verifier scores (`answerText`) is the decoded final turn: the response after the
 * last observation (the whole response when no tool ran).
 */
import type { Engine } from "../core/engine.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { hash32 } from "../util/rng.ts";
import type { ToolRegistry } from "./tools/registry.ts";
import { concatI32, type SamplingSettings, type Trajectory } from "./types.ts";

export interface AgentOptions extends Omit<SamplingSettings, "stopTokens"> {
  tools: ToolRegistry;
  /** Trajectories per prompt (the group size). */
  groupSize: number;
  /** Most tool calls run per trajectory. */
  maxTurns: number;
  /** Most response tokens (sampled + observations) per trajectory. */
  maxTokens: number;
  /** Longest prompt + response the engine accepts (default engine.info().maxSeqLen). */
  maxSeqLen?: number;
  /** Observation text for a tool result; `{}` is replaced by it. Default "<out>{}</out>". */
  observation?: string;
  /** Per-call timeout (ms) when the tool sets none. Default 10,000. */
  toolTimeoutMs?: number;
}

export interface AgentResult {
  /** prompts.length × groupSize trajectories, prompt-major, each with mask and answerText. */
  trajectories: Trajectory[];
  metrics: {
    "agent/tool_calls": number;
    /** Fraction of trajectories with at least one tool call. */
    "agent/tool_use_frac": number;
    /** Tool calls whose observation is an error. */
    "agent/tool_errors": number;
    "agent/observation_tokens": number;
    "agent/sampled_tokens": number;
    "agent/engine_calls": number;
    "stop/max_turns": number;
  };
}

/** A complete call at the end of `text`: `<name>input</name>` (+ whitespace). */
const CALL = /<([A-Za-z][A-Za-z0-9_-]*)>([\s\S]*?)<\/\1>\s*$/;

/** Parse the call that ends `text`, if any (pure; exposed for tests). */
export function parseToolCall(text: string, tools: ToolRegistry): { name: string; input: string } | null {
  const m = CALL.exec(text);
  if (!m || !tools.has(m[1]!)) return null;
  return { name: m[1]!, input: m[2]! };
}

const closeIdCache = new WeakMap<Tokenizer, number[]>();

/** Ids whose text contains ">" (special tokens excluded): where a call can end. Cached per tokenizer. */
export function closeTokenIds(tokenizer: Tokenizer): number[] {
  let ids = closeIdCache.get(tokenizer);
  if (!ids) {
    ids = [];
    for (let id = 0; id < tokenizer.vocabSize; id++) {
      if (id === tokenizer.eosId || id === tokenizer.bosId || id === tokenizer.padId) continue;
      let s = "";
      try {
        s = tokenizer.decode([id]);
      } catch {
        continue;
      }
      if (s.includes(">")) ids.push(id);
    }
    closeIdCache.set(tokenizer, ids);
  }
  return ids;
}

/** Encode text, dropping characters the tokenizer cannot encode (char tokenizers with a fixed alphabet). */
export function encodeLenient(tokenizer: Tokenizer, text: string): number[] {
  try {
    return tokenizer.encode(text, { addSpecialTokens: false });
  } catch {
    const out: number[] = [];
    for (const ch of Array.from(text)) {
      try {
        out.push(...tokenizer.encode(ch, { addSpecialTokens: false }));
      } catch {
        /* not in the vocabulary: dropped */
      }
    }
    return out;
  }
}

/**
 * The observation text for a tool result: `format` with its first `{}` replaced by `text`, taken
 * literally (String.replace with a string would expand `$&`, `$'`, `$$`… in a tool's output).
 */
export function formatObservation(format: string, text: string): string {
  return format.replace("{}", () => text);
}

async function runTool(tools: ToolRegistry, name: string, input: string, defaultTimeout: number): Promise<{ text: string; error: boolean }> {
  const tool = tools.get(name)!;
  const ms = tool.timeoutMs ?? defaultTimeout;
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("timeout")), ms)));
    const text = await Promise.race([Promise.resolve().then(() => tool.run(input)), timeout]);
    const s = String(text);
    return { text: s, error: s.startsWith("error:") };
  } catch (e) {
    return { text: `error: ${e instanceof Error ? e.message : String(e)}`, error: true };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * An SFT demonstration in the exact token layout the agent loop produces (token-in/token-out): each
 * segment is text the model writes, encoded with `tokenizer.encode` (loss mask 1); every segment but
 * the last must end with a complete call of a registered tool, which is run here as the loop runs it,
 * and its observation ids (`encodeLenient` of the observation format) follow with mask 0. The last
 * segment (the final answer) is followed by end-of-sequence unless `eos` is false.
 *
 * With a character tokenizer the result equals, id for id and mask for mask, the trajectory of a
 * model that samples exactly these characters through `agentRollouts` with the same tools and
 * observation format (test/rollout/agent.test.ts checks this), so SFT on it trains what RL samples.
 * @throws when a non-final segment does not end with a call of a registered tool.
 */
export async function toolDemonstration(
  tokenizer: Tokenizer,
  tools: ToolRegistry,
  segments: readonly string[],
  opts: { observation?: string; toolTimeoutMs?: number; eos?: boolean } = {},
): Promise<{ response: number[]; mask: number[] }> {
  const response: number[] = [];
  const mask: number[] = [];
  for (let i = 0; i < segments.length; i++) {
    const ids = tokenizer.encode(segments[i]!, { addSpecialTokens: false });
    for (const id of ids) response.push(id), mask.push(1);
    if (i === segments.length - 1) break;
    const call = parseToolCall(segments[i]!, tools);
    if (!call) throw new Error(`toolDemonstration: segment ${i} (${JSON.stringify(segments[i])}) must end with a call <name>input</name> of a registered tool (${tools.names().join(", ")})`);
    const out = await runTool(tools, call.name, call.input, opts.toolTimeoutMs ?? 10_000);
    for (const id of encodeLenient(tokenizer, formatObservation(opts.observation ?? "<out>{}</out>", out.text))) response.push(id), mask.push(0);
  }
  if (opts.eos !== false) response.push(tokenizer.eosId), mask.push(1);
  return { response, mask };
}

interface Row {
  p: number;
  tokens: number[];
  logprobs: number[];
  mask: number[];
  /** Response index where the current turn (after the last observation) starts. */
  turnStart: number;
  calls: number;
  sampled: number;
  done: boolean;
  stop: Trajectory["stopReason"];
}

/**
 * Run the agent loop for every prompt, `groupSize` times.
 * @param prompts prompt token ids.
 * @returns trajectories (prompt-major) and metrics. Never throws for anything a tool does.
 */
export async function agentRollouts(engine: Engine, tokenizer: Tokenizer, prompts: readonly Int32Array[], o: AgentOptions): Promise<AgentResult> {
  const maxSeqLen = o.maxSeqLen ?? engine.info().maxSeqLen;
  const obsFormat = o.observation ?? "<out>{}</out>";
  const stopTokens = [tokenizer.eosId, ...closeTokenIds(tokenizer)];
  const rows: Row[] = [];
  for (let p = 0; p < prompts.length; p++)
    for (let j = 0; j < o.groupSize; j++) rows.push({ p, tokens: [], logprobs: [], mask: [], turnStart: 0, calls: 0, sampled: 0, done: false, stop: "max_tokens" });
  // Engines may pad a prompt (the embedded engine to a multiple of 4): keep 3 positions of slack.
  const slack = 3;
  const remaining = (r: Row) => Math.min(o.maxTokens - r.tokens.length, maxSeqLen - slack - prompts[r.p]!.length - r.tokens.length);
  let engineCalls = 0;
  let toolErrors = 0;
  let obsTokens = 0;
  for (let round = 0; ; round++) {
    for (const r of rows) if (!r.done && remaining(r) <= 0) (r.done = true), (r.stop = "max_tokens");
    const active = rows.filter((r) => !r.done);
    if (active.length === 0) break;
    // One engine call per round, capped so the longest prefix fits; rows with more room than the
    // cap that hit it simply sample on in the next round.
    const batchPrefixes = active.map((r) => concatI32(prompts[r.p]!, r.tokens));
    const longest = Math.max(...batchPrefixes.map((x) => x.length));
    const cap = Math.max(1, Math.min(Math.max(...active.map(remaining)), maxSeqLen - slack - longest));
    const res = await engine.sample({ prompts: batchPrefixes, n: 1, maxNewTokens: cap, temperature: o.temperature, topP: o.topP, topK: o.topK, stopTokens, seed: hash32(o.seed, 0xa9, round) });
    engineCalls++;
    const calls: { row: Row; name: string; input: string }[] = [];
    res.forEach((s, i) => {
      const r = active[i]!;
      const room = remaining(r);
      const n = Math.min(s.tokens.length, room);
      for (let t = 0; t < n; t++) r.tokens.push(s.tokens[t]!), r.logprobs.push(s.logprobs[t]!), r.mask.push(1);
      r.sampled += n;
      if (n < s.tokens.length || (s.stopReason !== "completed" && n >= room)) {
        r.done = true;
        r.stop = "max_tokens";
        return;
      }
      if (s.stopReason !== "completed") return; // the call's cap, not the row's: sample on next round
      const last = s.tokens[s.tokens.length - 1]!;
      if (last === tokenizer.eosId) {
        r.done = true;
        r.stop = "completed";
        return;
      }
      const call = parseToolCall(tokenizer.decode(r.tokens.slice(r.turnStart)), o.tools);
      if (!call) return; // a ">" that closes no call: sample on
      if (r.calls >= o.maxTurns) {
        r.done = true;
        r.stop = "max_turns";
        return;
      }
      calls.push({ row: r, ...call });
    });
    const outs = await Promise.all(calls.map((c) => runTool(o.tools, c.name, c.input, o.toolTimeoutMs ?? 10_000)));
    calls.forEach(({ row: r }, i) => {
      const out = outs[i]!;
      r.calls++;
      if (out.error) toolErrors++;
      const ids = encodeLenient(tokenizer, formatObservation(obsFormat, out.text));
      if (ids.length > remaining(r)) {
        r.done = true;
        r.stop = "max_tokens";
        return;
      }
      for (const id of ids) r.tokens.push(id), r.logprobs.push(0), r.mask.push(0);
      obsTokens += ids.length;
      r.turnStart = r.tokens.length;
    });
  }
  const trajectories: Trajectory[] = rows.map((r) => ({
    promptIndex: r.p,
    tokens: Int32Array.from(r.tokens),
    logprobs: Float32Array.from(r.logprobs),
    mask: Float32Array.from(r.mask),
    stopReason: r.stop,
    sampledTokens: r.sampled,
    answerText: tokenizer.decode(r.tokens.slice(r.turnStart)),
    toolCalls: r.calls,
  }));
  const n = Math.max(1, rows.length);
  return {
    trajectories,
    metrics: {
      "agent/tool_calls": rows.reduce((a, r) => a + r.calls, 0) / n,
      "agent/tool_use_frac": rows.filter((r) => r.calls > 0).length / n,
      "agent/tool_errors": toolErrors,
      "agent/observation_tokens": obsTokens,
      "agent/sampled_tokens": rows.reduce((a, r) => a + r.sampled, 0),
      "agent/engine_calls": engineCalls,
      "stop/max_turns": rows.filter((r) => r.stop === "max_turns").length,
    },
  };
}
