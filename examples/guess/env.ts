// A multi-turn env: guess a secret number 0..9. Each turn the policy writes one digit and stops;
// the env answers ">" (the secret is higher) or "<" (lower), or ends the episode with reward 1 when
// the guess is right. A wrong guess inside the interval the earlier answers leave earns
// CONSISTENT_REWARD (0.1), one outside it nothing (the policy is paid for using the observations).
// Anything but one digit ends the episode; so does a fourth wrong guess. Token-level (no chat): the
// prompt is "<bos>?", a turn is "<digit><eos>".
//
// Registered on import (plugins: [./env.ts] in config.yaml, or import it from a program).
// In your project: import { defineEnv, envGroup, ... } from "rlvr". Inside this repository the
// sources are imported, so the plugin registers in the same registry as the run (run from source).
import { defineEnv, envGroup, type Env, type EnvStep, type Tokenizer } from "../../src/index.ts";

/** Reward of a wrong guess inside the interval the earlier answers leave (finding the secret earns 1). */
export const CONSISTENT_REWARD = 0.1;

/** Digits plus the env's three symbols: the char tokenizer's alphabet for this game. */
export const GUESS_ALPHABET = "0123456789?<>";

export class GuessEnv implements Env {
  private turns = 0;
  /** The interval the answers so far leave for the secret. */
  private lo = 0;
  private hi = 9;
  constructor(
    private readonly tok: Tokenizer,
    readonly secret: number,
    private readonly maxTurns = 4,
  ) {}
  initialObservation() {
    return { tokens: this.tok.encode("?"), stopTokens: [this.tok.eosId], maxTokens: 2 };
  }
  step(action: readonly number[]): EnvStep {
    const text = this.tok.decode(action);
    if (!/^[0-9]$/.test(text)) return { reward: 0, done: true, metrics: { malformed: 1 } };
    const guess = Number(text);
    this.turns++;
    if (guess === this.secret) return { reward: 1, done: true, metrics: { found: 1 } };
    // A wrong guess the earlier answers allowed earns the small reward; then narrow the interval.
    const consistent = guess >= this.lo && guess <= this.hi;
    const reward = consistent ? CONSISTENT_REWARD : 0;
    if (guess < this.secret) this.lo = Math.max(this.lo, guess + 1);
    else this.hi = Math.min(this.hi, guess - 1);
    const metrics = { inconsistent: consistent ? 0 : 1 };
    if (this.turns >= this.maxTurns) return { reward, done: true, metrics };
    return { reward, done: false, metrics, observation: this.tok.encode(guess < this.secret ? ">" : "<", { addSpecialTokens: false }) };
  }
}

/** The secret of group `index` (train and test draw from different streams). */
export function secretOf(seed: number, index: number, split: "train" | "test"): number {
  let h = (seed * 2654435761 + index * 40503 + (split === "test" ? 977 : 0)) >>> 0;
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> 0;
  return ((h ^ (h >>> 13)) >>> 0) % 10;
}

defineEnv(
  {
    name: "guess",
    description: "find a secret digit 0..9 in at most 4 guesses; the env says higher (>) or lower (<)",
    group: ({ seed, index, split, groupSize, tokenizer }) => {
      const secret = secretOf(seed, index, split);
      return envGroup(groupSize, () => new GuessEnv(tokenizer, secret));
    },
  },
  { replace: true },
);
