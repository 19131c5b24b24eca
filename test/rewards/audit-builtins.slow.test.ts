// rlvr verify-audit --attack on the built-in verifiers with valid rows: no attack may score above
// 0 (slow: the math CAS loads and the code attacks run programs in the sandbox).
import { test } from "node:test";
import assert from "node:assert/strict";
import { auditReward, formatAuditReport } from "../../src/rewards/audit/index.ts";
import { sandboxSupport } from "../../src/rewards/code/probe.ts";
import type { Example } from "../../src/core/example.ts";

const ex = (id: string, prompt: string, answer: string, meta?: Record<string, unknown>): Example => ({ id, prompt, answer, task: "t", ...(meta ? { meta } : {}) });
const mathRows = [ex("m1", "What is 3 + 4? Box the answer.", "7"), ex("m2", "How many legs do 3 spiders have?", "24"), ex("m3", "What is half of one?", "\\frac{1}{2}")];

// The built-in verifiers with valid rows must report none (math: words after numbers, hedged
// <answer> tags, an overruled box; ifeval: degenerate compliance — issue 26 §4, §5).
const builtins: [string, Record<string, unknown>, Example[]][] = [
  ["math", { verifier: "math" }, mathRows],
  ["ifeval", { verifier: "ifeval" }, [ex("i1", "Write about cats in at least 40 words, without commas, and mention whiskers.", "-", { constraints: [{ type: "length_constraints:number_words", relation: "at least", num_words: 40 }, { type: "punctuation:no_comma" }, { type: "keywords:existence", keywords: ["whiskers"] }] })]],
];
for (const [name, rewardBlock, rows] of builtins) {
  test(`built-in ${name} with valid rows: no attack scores above 0`, async () => {
    const r = await auditReward(rows, rewardBlock);
    assert.equal(r.findings.length, 0, formatAuditReport(r));
  });
}

test("built-in code with valid rows: no attack scores above 0 (function and stdio tests)", { skip: !sandboxSupport().python && "no python sandbox" }, async () => {
  const rows = [
    ex("k1", "Write add(a, b) in Python.", "-", { tests: [{ call: "add(1, 2)", expected: 3 }, { call: "add(-1, 5)", expected: 4 }] }),
    ex("k2", "Read two integers and print their sum.", "-", { tests: [{ input: "1 2\n", output: "3\n" }, { input: "5 6\n", output: "11\n" }] }),
  ];
  const r = await auditReward(rows, { verifier: "code" }, { attacks: ["empty", "markup-only", "harness-spoof", "stub-solution", "reference-spoof", "one-digit"] });
  assert.equal(r.findings.length, 0, formatAuditReport(r));
  assert.ok(r.responses > 40);
});

