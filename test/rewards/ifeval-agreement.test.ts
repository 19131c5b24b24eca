// Agreement with the reference IFEval implementation on a labelled set: 500 (instruction, response)
// pairs generated here from our own sentences and language samples (markdown, lists, sections,
// dividers, fences, 30 languages, upper/lower case), each labelled by running the reference
// program (instruction classes + evaluation rules, NLTK 3.10.4, langdetect with seed 0) in its
// strict and loose forms. Responses without any letter or digit are left out: there we differ
// on purpose (ifeval-exploits.test.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { verifyConstraints, fromIFEval, type IfevalMode } from "../../src/rewards/ifeval/index.ts";

interface Row {
  id: string;
  kwargs: Record<string, unknown>;
  response: string;
  reference: boolean;
  referenceLoose: boolean;
}
const rows: Row[] = readFileSync(new URL("./fixtures/ifeval-reference-labels.jsonl", import.meta.url), "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l) as Row);

function agreement(mode: IfevalMode, label: (r: Row) => boolean): { rate: number; misses: string[] } {
  const misses: string[] = [];
  for (const r of rows) {
    const ok = verifyConstraints(r.response, fromIFEval([r.id], [r.kwargs]), { mode }).results[0]!.ok;
    if (ok !== label(r)) misses.push(`${r.id} ${JSON.stringify(r.kwargs)} ours=${ok} ${JSON.stringify(r.response.slice(0, 80))}`);
  }
  return { rate: 1 - misses.length / rows.length, misses };
}

test("the labelled set covers every instruction with both outcomes", () => {
  assert.equal(rows.length, 500);
  assert.equal(new Set(rows.map((r) => r.id)).size, 25);
  assert.ok(rows.some((r) => r.reference) && rows.some((r) => !r.reference));
});

test("mode ifeval agrees with the reference's strict labels on >= 99% of pairs", () => {
  const { rate, misses } = agreement("ifeval", (r) => r.reference);
  assert.ok(rate >= 0.99, `agreement ${(rate * 100).toFixed(1)}%:\n${misses.join("\n")}`);
});

test("mode ifeval-loose agrees with the reference's loose labels on >= 99% of pairs", () => {
  const { rate, misses } = agreement("ifeval-loose", (r) => r.referenceLoose);
  assert.ok(rate >= 0.99, `agreement ${(rate * 100).toFixed(1)}%:\n${misses.join("\n")}`);
});

test("strict-words is a different rule set: it measurably departs from the reference", () => {
  const { rate } = agreement("strict-words", (r) => r.reference);
  assert.ok(rate < 0.99, `strict-words agreement ${(rate * 100).toFixed(1)}%`);
});
