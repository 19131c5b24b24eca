/**
 * Multiple-choice verifier: find the option the response chose and compare it with the key.
 */
import { answerStatement, clip, normalizeAnswer } from "./text.ts";
import type { Verdict } from "./types.ts";

export interface ChoiceOptions {
  /** Allowed labels (default A–J). Compared case-insensitively. */
  labels?: string[];
  /** Option texts, by label (`{A: "Paris", …}`) or in label order (`["Paris", …]`); enables
   *  matching a response that states the option's text instead of its label. */
  options?: Record<string, string> | string[];
}

const DEFAULT_LABELS = "ABCDEFGHIJ".split("");
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function optionMap(labels: string[], options: ChoiceOptions["options"]): Map<string, string> {
  const m = new Map<string, string>();
  if (Array.isArray(options)) options.forEach((t, i) => labels[i] !== undefined && m.set(labels[i]!.toUpperCase(), t));
  else if (options) for (const [k, v] of Object.entries(options)) m.set(k.toUpperCase(), v);
  return m;
}

/** A bare label, possibly wrapped: "B", "(B)", "B.", "B)", "[B]", "**B**", "Option B", "B: Paris". */
function bareLabel(s: string, labels: string[]): string | null {
  const alt = labels.map(escape).join("|");
  const re = new RegExp(`^[\\s*_\`"'$]*(?:option|choice)?\\s*(?:[(\\[{]\\s*(${alt})\\s*[)\\]}]|(${alt})(?=\\s*$|\\s*[.:)\\]*_\`"'$]))`, "i");
  const m = re.exec(s.replace(/\\text\{([^}]*)\}/g, "$1").replace(/\\textbf\{([^}]*)\}/g, "$1"));
  return m ? (m[1] ?? m[2])!.toUpperCase() : null;
}

/** The label an explicit answer phrase names: "Answer: B", "the answer is (C)", "I choose D". */
function phraseLabel(s: string, labels: string[]): string | null {
  const alt = labels.map(escape).join("|");
  const re = new RegExp(
    `(?:answer|correct option|correct choice|right option|choose|select|pick|go with)(?:\\s+(?:is|would be|will be|should be))?\\s*(?:[:=]|\\bis\\b)?\\s*[*_]*\\s*[(\\[]?\\s*(${alt})\\s*[)\\]]?(?=$|[\\s.:,;!*_)])`,
    "gi",
  );
  let last: string | null = null;
  for (const m of s.matchAll(re)) last = m[1]!.toUpperCase();
  return last;
}

/** The option whose text the span states (exactly one match after normalisation), or null. */
function textLabel(span: string, opts: Map<string, string>): string | null {
  const n = normalizeAnswer(span);
  if (!n) return null;
  const exact = [...opts].filter(([, t]) => normalizeAnswer(t) === n);
  if (exact.length === 1) return exact[0]![0];
  const contained = [...opts].filter(([, t]) => {
    const nt = normalizeAnswer(t);
    return nt.length > 0 && new RegExp(`(^| )${escape(nt)}( |$)`).test(n);
  });
  return contained.length === 1 ? contained[0]![0] : null;
}

/**
 * Extract the chosen label from a response.
 * Order: the stated answer (`<answer>` tags, else `\boxed{}`es, else a final-answer phrase after
 * them; see answerStatement — when they disagree the response hedges and chooses nothing), the
 * last explicit phrase ("Answer: B", "the answer is (C)"), a response that is only a label, a lone "(B)" on the last line, then option text.
 * @returns the upper-cased label, or null when no choice can be found.
 */
export function extractChoice(response: string, opts: ChoiceOptions = {}): string | null {
  const labels = (opts.labels ?? DEFAULT_LABELS).map((l) => l.toUpperCase());
  const texts = optionMap(labels, opts.options);
  const stated = answerStatement(response);
  if (stated && "hedge" in stated) return null; // several different answers (boxes or tags) choose nothing
  const spans = stated ? [stated.text] : [];
  for (const span of spans) {
    const l = bareLabel(span.trim(), labels) ?? phraseLabel(span, labels) ?? (texts.size ? textLabel(span, texts) : null);
    if (l) return l;
  }
  const phrase = phraseLabel(response, labels);
  if (phrase) return phrase;
  const whole = response.trim();
  if (whole.length <= 40) {
    const l = bareLabel(whole, labels);
    if (l) return l;
  }
  const lastLine = whole.split("\n").filter((x) => x.trim()).pop() ?? "";
  const alt = labels.map(escape).join("|");
  const paren = [...lastLine.matchAll(new RegExp(`\\((${alt})\\)`, "gi"))];
  if (paren.length === 1) return paren[0]![1]!.toUpperCase();
  if (texts.size) {
    const l = textLabel(lastLine, texts) ?? (whole.length <= 200 ? textLabel(whole, texts) : null);
    if (l) return l;
  }
  return null;
}

/**
 * Multiple-choice verifier.
 * @param response  model output
 * @param reference the correct label ("B"), or the correct option's text when `options` is given
 * @returns correct/reward 1 when the extracted label equals the key (case-insensitive).
 */
export function verifyChoice(response: string, reference: string, opts: ChoiceOptions = {}): Verdict {
  const labels = (opts.labels ?? DEFAULT_LABELS).map((l) => l.toUpperCase());
  const texts = optionMap(labels, opts.options);
  let key = String(reference).trim();
  const keyLabel = bareLabel(key, labels);
  if (keyLabel && key.replace(/[\s()[\].]/g, "").length === keyLabel.length) key = keyLabel;
  else if (texts.size) key = textLabel(key, texts) ?? key.toUpperCase();
  else key = key.toUpperCase();
  const got = extractChoice(response, opts);
  if (got === null) return { correct: false, reward: 0, extracted: null, reason: "no choice found in the response" };
  const correct = got === key;
  return {
    correct,
    reward: correct ? 1 : 0,
    extracted: got,
    reason: correct ? `chose ${got}, the key` : `chose ${got}, key is ${clip(key, 40)}`,
  };
}
