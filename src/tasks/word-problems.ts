/**
 * `word-problems`: GSM8K-style arithmetic word problems in natural language, for chat models.
 *
 * A story about one person and one kind of item: a starting amount, then d events (buys, gets,
 * gives away, loses, packs into boxes of k, shares equally among k friends), then a question. The
 * answer is an integer; every intermediate amount is a non-negative integer (divisions are exact).
 * Difficulty d ∈ 1..8: d = 1 is one event with single-digit numbers, d ≥ 2 has d − 1 events with
 * amounts up to 10·d (factors up to 1 + d) — so the knob moves from what a 135M chat model solves
 * about half the time to multi-step stories it rarely solves. The prompt ends with the instruction to put the final answer after
 * `####` (GSM8K's convention); `solution` is a worked solution ending in `#### n`.
 *
 * Verifier: the math verifier's final-answer extraction (`#### n`, `\boxed{n}`, "the answer is n", the
 * last number; see docs/rewards-math.md) and an exact integer comparison (verifyWordProblem).
 *
 * Source: the layout of GSM8K (Cobbe et al. 2021, arXiv:2110.14168): a question in prose and an
 * integer answer after `####`. The stories are generated, not taken from the dataset.
 */
import { extractAnswer } from "../rewards/math/extract.ts";
import { normalizeAnswer } from "../rewards/math/normalize.ts";
import type { Rng } from "./rng.ts";
import { checkDifficulty, generateInSplit, type GenerateOptions } from "./split.ts";
import type { Task, Verdict } from "./types.ts";
import type { Example } from "../core/example.ts";

const NAMES = ["Mia", "Noah", "Ava", "Liam", "Zoe", "Omar", "Lena", "Ravi", "Ines", "Kofi", "Yuki", "Sam"];
const ITEMS = ["apples", "marbles", "stickers", "pencils", "cookies", "stamps", "shells", "cards", "books", "coins"];

/** One event of a story: how it reads and what it does to the amount. */
interface Event {
  text: string;
  apply: (x: number) => number;
  step: (x: number) => string;
}

const MAX_DIFFICULTY = 8;

/** Largest starting amount and addend at difficulty d. */
const maxAmount = (d: number) => (d === 1 ? 9 : 10 * d);

/** An event applicable to the current amount `x` (never makes it negative or fractional). */
function drawEvent(rng: Rng, x: number, d: number, who: string, item: string): Event {
  const add = rng.int(2, maxAmount(d));
  const kinds = ["buy", "get"];
  if (x >= 2) kinds.push("give", "lose");
  if (x <= 60 && d > 1) kinds.push("times");
  const divisors = [2, 3, 4, 5].filter((k) => x % k === 0 && x / k >= 1);
  if (divisors.length > 0) kinds.push("share");
  const kind = rng.pick(kinds);
  switch (kind) {
    case "buy":
      return { text: `${who} buys ${add} more ${item}.`, apply: (v) => v + add, step: (v) => `${v} + ${add} = ${v + add}` };
    case "get":
      return { text: `A friend gives ${who} ${add} ${item}.`, apply: (v) => v + add, step: (v) => `${v} + ${add} = ${v + add}` };
    case "give": {
      const k = rng.int(1, x - 1);
      return { text: `${who} gives ${k} ${item} to a neighbour.`, apply: (v) => v - k, step: (v) => `${v} - ${k} = ${v - k}` };
    }
    case "lose": {
      const k = rng.int(1, x - 1);
      return { text: `${who} loses ${k} of the ${item}.`, apply: (v) => v - k, step: (v) => `${v} - ${k} = ${v - k}` };
    }
    case "times": {
      const k = rng.int(2, 1 + d);
      return { text: `Then the number of ${item} ${who} has becomes ${k} times as large.`, apply: (v) => v * k, step: (v) => `${v} * ${k} = ${v * k}` };
    }
    default: {
      const k = rng.pick(divisors);
      return { text: `${who} splits the ${item} into ${k} equal piles and keeps one pile.`, apply: (v) => v / k, step: (v) => `${v} / ${k} = ${v / k}` };
    }
  }
}

/** Build one story with `d` events. */
function makeProblem(rng: Rng, d: number) {
  const who = rng.pick(NAMES);
  const item = rng.pick(ITEMS);
  let x = rng.int(3, maxAmount(d));
  const lines = [`${who} has ${x} ${item}.`];
  const steps: string[] = [];
  const events = Math.max(1, d - 1);
  for (let i = 0; i < events; i++) {
    const e = drawEvent(rng, x, d, who, item);
    lines.push(e.text);
    steps.push(e.step(x));
    x = e.apply(x);
  }
  const question = `${lines.join(" ")} How many ${item} does ${who} have now?`;
  const prompt = `${question}\nWrite the final answer as a number after "####".`;
  const answer = String(x);
  return { prompt, answer, solution: `${steps.join("\n")}\n#### ${answer}`, key: question, meta: { events } };
}

/**
 * Grade a response to a word problem: the math verifier's final-answer extraction (`#### n`,
 * `\boxed{n}`, "the answer is n", else the last number; docs/rewards-math.md) and its
 * normalisation (units and count nouns stripped: "11 cards" is 11), then an exact integer
 * comparison — the answers are integers, so no CAS is loaded. Never throws; a response with no
 * final answer, a non-integer or a qualified one ("at least 11") scores 0.
 */
export function verifyWordProblem(response: string, example: Example): Verdict {
  const found = extractAnswer(typeof response === "string" ? response : "");
  if (!found) return { correct: false, reward: 0, extracted: null, reason: "no final answer" };
  const value = normalizeAnswer(found.answer, true).replace(/^\{(.*)\}$/, "$1").trim();
  if (!/^-?\d+(?:\.0+)?$/.test(value)) return { correct: false, reward: 0, extracted: found.answer, reason: `not an integer: ${JSON.stringify(value)}` };
  const reference = typeof example.answer === "string" ? example.answer.trim() : "";
  if (!/^-?\d+$/.test(reference)) return { correct: false, reward: 0, extracted: found.answer, reason: `the example's answer is not an integer: ${JSON.stringify(example.answer)}` };
  const ok = BigInt(value.replace(/\.0+$/, "")) === BigInt(reference);
  return { correct: ok, reward: ok ? 1 : 0, extracted: found.answer, reason: ok ? `ok (${found.mode})` : `wrong answer (expected ${example.answer})` };
}

/** GSM8K-style arithmetic word problems for chat models; difficulty 1..8 (events and magnitudes). */
export const wordProblemsTask: Task = {
  name: "word-problems",
  difficulties: {
    min: 1,
    max: MAX_DIFFICULTY,
    default: 1,
    description: "1: one event with single-digit numbers; d >= 2: d - 1 events (each +, -, × or an exact ÷) with amounts up to 10·d; the answer is an integer written after ####",
  },
  generate(g: GenerateOptions): Example {
    checkDifficulty("word-problems", g.difficulty, 1, MAX_DIFFICULTY);
    return generateInSplit("word-problems", g, (rng) => makeProblem(rng, g.difficulty));
  },
  verify: verifyWordProblem,
};
