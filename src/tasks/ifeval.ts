/**
 * Instruction following: a short writing request carrying k random constraints, checked by the
 * IFEval-style constraint verifiers in src/rewards/ifeval. Difficulty = k (1..7), one constraint
 * from each of k distinct groups, so constraints never contradict each other:
 *
 *   case (all lower / all upper) · length (at least / at most N words) · include keywords ·
 *   forbidden words · no commas · end phrase · P.S. postscript
 *
 * The verifier scores 1 when every constraint holds (`partialCredit: true` gives the fraction
 * satisfied instead); any response that meets the constraints passes. `solution` is a response
 * built to satisfy them (checked at generation time).
 */
import type { Task, Verdict } from "./types.ts";
import type { Example } from "../core/example.ts";
import type { Rng } from "./rng.ts";
import { checkDifficulty, generateInSplit, type GenerateOptions } from "./split.ts";
import { fail } from "./answer.ts";
import { verifyConstraints, type Constraint, type IfevalMode } from "../rewards/ifeval/index.ts";

const TOPICS = [
  "a rainy afternoon in the city", "your favourite breakfast", "learning to ride a bike", "a walk by the sea",
  "a small garden on a balcony", "the first day at a new job", "a visit to a museum", "a long train journey",
  "cooking soup for friends", "a quiet library", "a winter morning", "a lost umbrella",
];
const KEYWORDS = ["lantern", "orange", "violin", "harbor", "pebble", "meadow", "compass", "kettle"];
const FORBIDDEN = ["very", "really", "nice", "thing", "stuff", "amazing", "basically", "literally"];
const ENDINGS = ["That is all for today.", "See you soon.", "Thank you for reading.", "The end."];
const FILLER =
  "It started slowly and then the day found its own pace. Small details stood out more than usual. " +
  "People moved past with quiet purpose and the air felt calm. I made a note to remember it later. " +
  "Looking back it was a good and simple time.";

type Group = "case" | "length" | "include" | "forbidden" | "commas" | "ending" | "postscript";
const GROUPS: Group[] = ["case", "length", "include", "forbidden", "commas", "ending", "postscript"];

/** Instruction-following instance data kept in `Example.meta`. */
export interface IfevalMeta {
  constraints: Constraint[];
  [k: string]: unknown;
}

/** Options for the instruction-following task. */
export interface IfevalOptions {
  /** Reward = fraction of constraints satisfied instead of all-or-nothing (default false). */
  partialCredit?: boolean;
  /** Counting rules: "ifeval" (the reference IFEval rules, default) or "strict-words". */
  mode?: IfevalMode;
}

/** Build the instruction-following task. */
export function createIfevalTask(opts: IfevalOptions = {}): Task {
  const name = "ifeval";
  const make = (rng: Rng, k: number) => {
    const topic = rng.pick(TOPICS);
    const groups = rng.shuffle(GROUPS).slice(0, k);
    const constraints: Constraint[] = [];
    const rules: string[] = [];
    let body = `Here is a short note about ${topic}. ${FILLER}`;
    let caseFn = (s: string) => s;
    let ending = "";
    let postscript = "";
    for (const g of rng.shuffle(GROUPS).filter((x) => groups.includes(x))) {
      if (g === "case") {
        const lower = rng.chance(0.5);
        constraints.push({ type: lower ? "lowercase" : "uppercase" });
        rules.push(lower ? "Use only lowercase letters." : "Use only capital letters.");
        caseFn = lower ? (s) => s.toLowerCase() : (s) => s.toUpperCase();
      } else if (g === "length") {
        const atLeast = rng.chance(0.5);
        const n = atLeast ? rng.int(3, 8) * 5 : rng.int(18, 30) * 5;
        constraints.push({ type: "word_count", relation: atLeast ? "at least" : "at most", num_words: n });
        rules.push(`Write ${atLeast ? "at least" : "at most"} ${n} words.`);
      } else if (g === "include") {
        const kw = rng.shuffle(KEYWORDS).slice(0, 2);
        constraints.push({ type: "keywords_include", keywords: kw });
        rules.push(`Include the words "${kw[0]}" and "${kw[1]}".`);
        body += ` I thought of a ${kw[0]} and a ${kw[1]}.`;
      } else if (g === "forbidden") {
        const fw = rng.shuffle(FORBIDDEN).slice(0, 2);
        constraints.push({ type: "keywords_forbidden", forbidden_words: fw });
        rules.push(`Do not use the words "${fw[0]}" or "${fw[1]}".`);
      } else if (g === "commas") {
        constraints.push({ type: "no_commas" });
        rules.push("Do not use any commas.");
      } else if (g === "ending") {
        ending = rng.pick(ENDINGS);
        constraints.push({ type: "ends_with", end_phrase: ending });
        rules.push(`End your response with "${ending}"`);
      } else {
        constraints.push({ type: "postscript", postscript_marker: "P.S." });
        rules.push("Add a postscript starting with P.S. at the end.");
        postscript = "P.S. Write back when you can.";
      }
    }
    const solution = caseFn([body, postscript, ending].filter((s) => s !== "").join("\n"));
    const check = verifyConstraints(solution, constraints, { mode: opts.mode });
    if (!check.correct) throw new Error(`ifeval: built solution fails its constraints: ${check.reason}`);
    const prompt = `Write a short note about ${topic}. Follow ${k === 1 ? "this rule" : "these rules"}:\n${rules.map((r, i) => `${i + 1}. ${r}`).join("\n")}`;
    const meta: IfevalMeta = { constraints };
    return { prompt, answer: JSON.stringify(constraints), solution, meta };
  };
  return {
    name,
    difficulties: { min: 1, max: GROUPS.length, default: 2, description: `number of constraints, each from a different group (${GROUPS.join(", ")})` },
    generate(g: GenerateOptions): Example {
      checkDifficulty(name, g.difficulty, 1, GROUPS.length);
      return generateInSplit(name, g, (rng) => make(rng, g.difficulty));
    },
    verify(response: string, example: Example): Verdict {
      const meta = example.meta as IfevalMeta | undefined;
      if (!meta || !Array.isArray(meta.constraints)) return fail("example has no ifeval meta");
      if (typeof response !== "string" || response.trim() === "") return fail("empty response");
      const v = verifyConstraints(response, meta.constraints, { mode: opts.mode, gate: true });
      const frac = v.results.length ? v.results.filter((r) => r.ok).length / v.results.length : 0;
      return { correct: v.correct, reward: v.correct ? 1 : opts.partialCredit ? frac : 0, extracted: null, reason: v.reason };
    },
  };
}

/** Instruction following with 1..7 random constraints. */
export const ifevalTask: Task = createIfevalTask();
