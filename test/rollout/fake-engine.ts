// A scripted Engine for rollout tests: the next token is a function of the full prefix (prompt +
// response so far), entropy is a function of the position, and every sample call is recorded.
import type { Engine, SampleRequest, SampleResult, TokenBatch, TokenScores } from "../../src/core/engine.ts";
import { CharTokenizer } from "../../src/tokenizers/char.ts";

export type Policy = (prefix: readonly number[], row: number) => number;

export class ScriptedEngine implements Engine {
  readonly calls: { req: SampleRequest; results: SampleResult[] }[] = [];
  constructor(
    private readonly policy: Policy,
    private readonly entropyAt: (tokens: readonly number[], t: number) => number = () => 1,
    private readonly maxSeqLen = 256,
  ) {}
  info() {
    return { engine: "fake", modelId: "fake", vocabSize: 64, maxSeqLen: this.maxSeqLen, numParams: 0, device: "cpu", dtype: "float32" };
  }
  async sample(req: SampleRequest): Promise<SampleResult[]> {
    const out: SampleResult[] = [];
    const stop = new Set(req.stopTokens ?? []);
    req.prompts.forEach((prompt, i) => {
      for (let j = 0; j < req.n; j++) {
        const prefix = [...prompt];
        const tokens: number[] = [];
        let stopReason: SampleResult["stopReason"] = "max_tokens";
        while (tokens.length < req.maxNewTokens) {
          const t = this.policy(prefix, i * req.n + j);
          tokens.push(t);
          prefix.push(t);
          if (stop.has(t)) {
            stopReason = "completed";
            break;
          }
        }
        out.push({ promptIndex: i, tokens: Int32Array.from(tokens), logprobs: new Float32Array(tokens.length).fill(-0.5), stopReason });
      }
    });
    this.calls.push({ req, results: out });
    return out;
  }
  async score(batch: TokenBatch, opts: { model: "policy" | "reference"; entropy?: boolean }): Promise<TokenScores> {
    const { batchSize: B, seqLen: T } = batch;
    const entropy = new Float32Array(B * T);
    for (let b = 0; b < B; b++) {
      const toks = Array.from(batch.tokens.subarray(b * T, b * T + batch.lengths[b]!));
      for (let t = 1; t < batch.lengths[b]!; t++) entropy[b * T + t] = this.entropyAt(toks, t);
    }
    return { logprobs: new Float32Array(B * T), entropy: opts.entropy ? entropy : undefined };
  }
  async forwardBackward(): Promise<never> {
    throw new Error("not used");
  }
  async optimStep(): Promise<never> {
    throw new Error("not used");
  }
  async setReference() {}
  async save() {}
  async load() {}
  async close() {}
}

export const tok = new CharTokenizer({ alphabet: "0123456789+-*/=()<>/aclotu:erxyz ".replace(/(.)(?=.*\1)/g, "") });

/** A policy that writes `script(responseText)` one character at a time, then EOS. */
export function scripted(promptLen: (prefix: readonly number[]) => number, script: (responseSoFar: string, row: number) => string): Policy {
  return (prefix, row) => {
    const resp = tok.decode(prefix.slice(promptLen(prefix)));
    const target = script(resp, row);
    if (target.startsWith(resp) && target.length > resp.length) return tok.encode(target[resp.length]!, { addSpecialTokens: false })[0]!;
    return tok.eosId;
  };
}
