/** Where a task's final answer sits in a free-form response. */

/**
 * The part of a response that holds the final answer: the content of the last
 * `<answer>…</answer>` block (an unclosed last `<answer>` runs to the end), else the content of
 * the last `\boxed{…}`, else the last non-empty line. Returns null for an empty response.
 */
export function answerRegion(response: string): string | null {
  if (typeof response !== "string") return null;
  const tagged = [...response.matchAll(/<answer>([\s\S]*?)(?:<\/answer>|$)/g)];
  if (tagged.length > 0) return tagged[tagged.length - 1]![1]!.trim();
  const i = response.lastIndexOf("\\boxed{");
  if (i >= 0) {
    let depth = 0;
    for (let k = i + 6; k < response.length; k++) {
      if (response[k] === "{") depth++;
      else if (response[k] === "}" && --depth === 0) return response.slice(i + 7, k).trim();
    }
  }
  const lines = response.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "");
  return lines.length > 0 ? lines[lines.length - 1]! : null;
}

/** The last yes/no word in a text ("yes"/"no"), or null. Case-insensitive; "true"/"false" count too. */
export function extractYesNo(text: string | null): "yes" | "no" | null {
  if (text === null) return null;
  const m = [...text.toLowerCase().matchAll(/\b(yes|no|true|false)\b/g)];
  if (m.length === 0) return null;
  const w = m[m.length - 1]![1]!;
  return w === "yes" || w === "true" ? "yes" : "no";
}

/** Build a failed Verdict. */
export function fail(reason: string, extracted: string | null = null) {
  return { correct: false, reward: 0, extracted, reason };
}

/** Build a passed Verdict. */
export function pass(extracted: string) {
  return { correct: true, reward: 1, extracted, reason: "ok" };
}
