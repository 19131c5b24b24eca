/**
 * Multi-turn tool use: an agent loop that samples, runs the tools the model calls, appends their
 * output as observation tokens and samples on, up to a turn limit. It is an Env (`ToolEnv`, over
 * src/envs/) played by the env rollout loop (./env.ts), like every multi-turn episode.
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
import type { Engine, Sampler } from "../core/engine.ts";
import type { Env, EnvStep, InitialObservation } from "../envs/types.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { envRollouts } from "./env.ts";
import type { ToolRegistry } from "./tools/registry.ts";
import type { SamplingSettings, Trajectory } from "./types.ts";

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
  /** Where the turns are sampled when not by the engine: the run's sampler (vLLM, a server, a worker thread), as for every env. */
  sampler?: Pick<Sampler, "sample">;
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

/**
 * The tool loop as an Env (src/envs/): the episode of one trajectory. Its turns stop at
 * end-of-sequence or at any id whose text contains ">"; `step` reads the current turn (the ids
 * since the last observation): end-of-sequence ends the episode; a complete call of a registered
 * tool runs it and answers with the observation ids (`encodeLenient` of the observation format),
 * unless `maxTurns` calls have run (the episode is cut: max_turns); anything else (the ">" of an
 * opening tag, a turn cut at its token cap) samples on with an empty observation. Reward 0: the
 * run's verifier scores the final turn (AgentResult).
 */
export class ToolEnv implements Env {
  /** Tool calls run. */
  calls = 0;
  /** Calls whose observation is an error. */
  errors = 0;
  private turn: number[] = [];

  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly prompt: Int32Array,
    private readonly o: Pick<AgentOptions, "tools" | "maxTurns" | "observation" | "toolTimeoutMs">,
  ) {}

  initialObservation(): InitialObservation {
    return { tokens: Array.from(this.prompt), stopTokens: [this.tokenizer.eosId, ...closeTokenIds(this.tokenizer)] };
  }

  async step(action: readonly number[], info: { truncated: boolean }): Promise<EnvStep> {
    this.turn.push(...action);
    const sampleOn: EnvStep = { reward: 0, done: false, observation: [] };
    if (info.truncated) return sampleOn;
    if (action.at(-1) === this.tokenizer.eosId) return { reward: 0, done: true };
    const call = parseToolCall(this.tokenizer.decode(this.turn), this.o.tools);
    if (!call) return sampleOn;
    if (this.calls >= this.o.maxTurns) return { reward: 0, done: true, cut: "max_turns" };
    const out = await runTool(this.o.tools, call.name, call.input, this.o.toolTimeoutMs ?? 10_000);
    this.calls++;
    if (out.error) this.errors++;
    this.turn = [];
    return { reward: 0, done: false, observation: encodeLenient(this.tokenizer, formatObservation(this.o.observation ?? "<out>{}</out>", out.text)) };
  }
}

/** The text of the final turn: the response after its last observation (mask 0), decoded. */
function finalTurn(tokenizer: Tokenizer, t: Trajectory): string {
  const last = t.mask ? t.mask.lastIndexOf(0) : -1;
  return tokenizer.decode(t.tokens.subarray(last + 1));
}

/**
 * Run the agent loop for every prompt, `groupSize` times: a ToolEnv per trajectory, played by the
 * env rollout loop (src/rollout/env.ts), the one multi-turn mechanism of rlvr.
 * @param prompts prompt token ids.
 * @returns trajectories (prompt-major) and metrics. Never throws for anything a tool does.
 */
export async function agentRollouts(engine: Engine, tokenizer: Tokenizer, prompts: readonly Int32Array[], o: AgentOptions): Promise<AgentResult> {
  const groups = prompts.map((p) => ({ envs: Array.from({ length: o.groupSize }, () => new ToolEnv(tokenizer, p, o)) }));
  const res = await envRollouts(o.sampler ?? engine, tokenizer, groups, {
    temperature: o.temperature,
    topP: o.topP,
    topK: o.topK,
    seed: o.seed,
    // The env counts tool calls itself (a step is also every ">" that closes no call).
    maxTurns: Number.POSITIVE_INFINITY,
    maxTokens: o.maxTokens,
    maxSeqLen: o.maxSeqLen ?? engine.info().maxSeqLen,
    env: { name: "tools" },
  });
  const envs = groups.flatMap((g) => g.envs);
  const trajectories: Trajectory[] = res.trajectories.map((t, i) => ({ ...t, answerText: finalTurn(tokenizer, t), toolCalls: envs[i]!.calls }));
  const n = Math.max(1, envs.length);
  return {
    trajectories,
    metrics: {
      "agent/tool_calls": envs.reduce((a, e) => a + e.calls, 0) / n,
      "agent/tool_use_frac": envs.filter((e) => e.calls > 0).length / n,
      "agent/tool_errors": envs.reduce((a, e) => a + e.errors, 0),
      "agent/observation_tokens": res.metrics["env/observation_tokens"]!,
      "agent/sampled_tokens": trajectories.reduce((a, t) => a + t.sampledTokens, 0),
      "agent/engine_calls": res.metrics["env/sample_calls"]!,
      "stop/max_turns": trajectories.filter((t) => t.stopReason === "max_turns").length,
    },
  };
}
