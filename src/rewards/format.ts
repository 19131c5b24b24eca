/**
 * Format verifier: does the response follow a required layout?
 *
 * Built-in template "think-answer": `<think>…</think>` then `<answer>…</answer>`, each exactly once,
 * nothing but whitespace around them (the DeepSeek-R1-Zero layout). Custom layouts are either a
 * RegExp or a template string where `{name}` stands for any text (captured under that name) and
 * runs of whitespace match any whitespace, e.g. `"<reasoning>{why}</reasoning>\nFinal: {answer}"`.
 */
import type { Verdict } from "./types.ts";

export interface FormatOptions {
  /** "think-answer" (default), a template string with {placeholders}, or a RegExp. */
  template?: "think-answer" | string | RegExp;
  /** Allow text before the first / after the last literal part (default false). */
  allowSurrounding?: boolean;
  /** Tags that must appear exactly once (checked in addition to the template; default: the
   *  think/answer tags for the built-in template, none otherwise). */
  uniqueTags?: string[];
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Compile a template string into an anchored RegExp with named groups.
 * @throws Error when a placeholder name is not a JS identifier or repeats.
 */
export function compileTemplate(template: string, allowSurrounding = false): RegExp {
  const parts = template.split(/(\{[^{}]*\})/);
  const seen = new Set<string>();
  let src = "";
  for (const p of parts) {
    const m = /^\{([^{}]*)\}$/.exec(p);
    if (m) {
      const name = m[1]!.trim();
      if (name === "" || name === "...") {
        src += "[\\s\\S]*?";
        continue;
      }
      if (!/^[A-Za-z_$][\w$]*$/.test(name)) throw new Error(`format template: placeholder {${name}} must be an identifier`);
      if (seen.has(name)) throw new Error(`format template: placeholder {${name}} used twice`);
      seen.add(name);
      src += `(?<${name}>[\\s\\S]*?)`;
    } else {
      src += p.split(/\s+/).map(escape).join("\\s*");
    }
  }
  return allowSurrounding ? new RegExp(src) : new RegExp(`^\\s*${src}\\s*$`);
}

const THINK_ANSWER = /^\s*<think>(?<think>[\s\S]*?)<\/think>\s*<answer>(?<answer>[\s\S]*?)<\/answer>\s*$/;

function count(s: string, needle: string): number {
  let n = 0;
  for (let i = s.indexOf(needle); i >= 0; i = s.indexOf(needle, i + needle.length)) n++;
  return n;
}

/**
 * Check the layout of a response.
 * @returns correct/reward 1 when it matches; `groups` holds the captured placeholders
 *          (built-in: think, answer); extracted = the "answer" group when present.
 */
export function verifyFormat(response: string, opts: FormatOptions = {}): Verdict & { groups: Record<string, string> } {
  const t = opts.template ?? "think-answer";
  const re = t === "think-answer" ? THINK_ANSWER : t instanceof RegExp ? t : compileTemplate(t, opts.allowSurrounding);
  const tags = opts.uniqueTags ?? (t === "think-answer" ? ["think", "answer"] : []);
  for (const tag of tags) {
    const open = count(response, `<${tag}>`);
    const close = count(response, `</${tag}>`);
    if (open !== 1 || close !== 1) {
      return { correct: false, reward: 0, extracted: null, reason: `<${tag}> must appear exactly once (open ${open}, close ${close})`, groups: {} };
    }
  }
  const m = re.exec(response);
  if (!m) return { correct: false, reward: 0, extracted: null, reason: "layout does not match the template", groups: {} };
  const groups: Record<string, string> = { ...(m.groups ?? {}) };
  return { correct: true, reward: 1, extracted: groups.answer?.trim() ?? null, reason: "layout matches", groups };
}
