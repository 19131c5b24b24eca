// rlvr verify-audit --attack / auditReward: the attack library finds a weak reward's exploits and
// reports none on sound rewards with valid rows (the controls).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { auditReward, formatAuditReport } from "../../src/rewards/audit/index.ts";
import { ATTACKS, isReferenceAnswer } from "../../src/rewards/audit/attacks.ts";
import { runAttackAudit } from "../../src/cli/commands/audit-attack.ts";
import type { Example } from "../../src/core/example.ts";
import { verifyExactMatch, verifyTokenF1 } from "../../src/rewards/exact.ts";
import { verifyChoice } from "../../src/rewards/choice.ts";
import "./fixtures/schema-rewards.ts";

const ex = (id: string, prompt: string, answer: string, meta?: Record<string, unknown>): Example => ({ id, prompt, answer, task: "t", ...(meta ? { meta } : {}) });
const mathRows = [ex("m1", "What is 3 + 4? Box the answer.", "7"), ex("m2", "How many legs do 3 spiders have?", "24"), ex("m3", "What is half of one?", "\\frac{1}{2}")];

test("every attack makes responses that are not the reference, row-specific where it can", () => {
  const e = mathRows[0]!;
  const all = ATTACKS.flatMap((a) => a.responses(e).filter((r) => !isReferenceAnswer(r, e)).map((r) => [a.name, r] as const));
  assert.ok(all.length > 100);
  // The sweep meets the answer (7): those responses are correct answers and are left out.
  assert.ok(isReferenceAnswer("\\boxed{7}", e) && isReferenceAnswer("The answer is 7.", e) && isReferenceAnswer("7", e));
  assert.ok(!isReferenceAnswer("\\boxed{8} or \\boxed{7}", e) && !isReferenceAnswer("7 or more", e));
  const names = new Set(all.map(([n]) => n));
  for (const a of ATTACKS) if (a.name !== "stub-solution") assert.ok(names.has(a.name), a.name);
  assert.ok(all.some(([n, r]) => n === "words-after-number" && r === "7 or more"));
  assert.ok(all.some(([n, r]) => n === "hedged-boxes" && r === "\\boxed{8} or \\boxed{7}"));
  // Stubs are named after the functions the tests call.
  const code = ex("k", "Write add.", "-", { tests: [{ call: "add(1, 2)", expected: 3 }] });
  assert.ok(ATTACKS.find((a) => a.name === "stub-solution")!.responses(code).some((r) => r.includes("def add(*args, **kwargs)")));
  // A multiple-choice key's option text is the answer too.
  assert.ok(isReferenceAnswer("7", ex("c", "A) 3 B) 7", "B", { options: ["3", "7"] })));
});

test("a deliberately weak reward (1 when the response holds a digit) is reported", async () => {
  const r = await auditReward(mathRows, { verifier: "fixture-has-digit" });
  assert.ok(r.findings.length > 50, formatAuditReport(r));
  for (const a of ["one-digit", "small-integers", "words-after-number", "hedged-boxes", "very-long"]) assert.ok(r.byAttack[a]! > 0, a);
  assert.ok(!r.byAttack.empty && !r.byAttack.whitespace); // no digit, no reward: the report is precise
  const f = r.findings.find((x) => x.attack === "one-digit")!;
  assert.deepEqual([f.row, f.id, f.score], [1, "m1", 1]);
  assert.match(formatAuditReport(r), /^audited 3 rows with \d+ attacks[\s\S]*\nattack +row +score +response\none-digit +1 \(m1\) +1 +"0"\n/);
});

test("control: a strict whole-response exact match reports none", async () => {
  const r = await auditReward(mathRows, { verifier: "exact", options: { extract: false } });
  assert.equal(r.findings.length, 0, formatAuditReport(r));
  assert.ok(r.responses > 300);
  assert.match(formatAuditReport(r), /no attack scored above 0/);
});

test("built-in exact and choice with valid rows: no attack scores above 0", async () => {
  const exact = await auditReward([...mathRows, ex("p", "Capital of France?", "Paris")], { verifier: "exact" });
  assert.equal(exact.findings.length, 0, formatAuditReport(exact));
  const choice = await auditReward([ex("c", "Pick: A) 3 B) 4 C) 7 D) 8", "C", { options: ["3", "4", "7", "8"] })], { verifier: "choice" });
  assert.equal(choice.findings.length, 0, formatAuditReport(choice));
});

test("short answers fail closed on hedges; the controls still score 1", () => {
  const hedges = ["\\boxed{8} or \\boxed{7}", "\\boxed{8}\\boxed{7}", "<answer>8</answer> <answer>7</answer>", "A common mistake is \\boxed{7}; the answer is 8.", "\\boxed{7} is wrong. Final answer: 8", "\\boxed{7} \\boxed{}", "\\boxed{7} and \\boxed{8"];
  for (const r of hedges) assert.equal(verifyExactMatch(r, "7").reward, 0, r);
  for (const r of hedges) assert.equal(verifyTokenF1(r, "7").reward, 0, r);
  for (const r of ["\\boxed{A} or \\boxed{C}", "<answer>A</answer><answer>C</answer>", "A common mistake is \\boxed{C}; the answer is A."]) assert.equal(verifyChoice(r, "C").reward, 0, r);
  const controls = ["\\boxed{7}", "\\boxed{7} \\boxed{7}", "<answer>7</answer>", "So the answer is \\boxed{7}.", "\\boxed{7}\n\nThe answer is 7 because 3 + 4 = 7.", "\\boxed{7}\n\nI hope this answer is helpful.", "The answer is 7."];
  for (const r of controls) assert.equal(verifyExactMatch(r, "7").reward, 1, r);
  for (const r of ["\\boxed{C}", "<answer>C</answer>", "The answer is (C).", "\\boxed{C}\n\nThe answer is C because 7 is prime."]) assert.equal(verifyChoice(r, "C").reward, 1, r);
});

test("composite rewards are audited as a whole (a format bonus alone is reported)", async () => {
  const r = await auditReward(mathRows.slice(0, 1), { components: [{ verifier: "format", weight: 0.2, options: { template: "think-answer" } }, { verifier: "exact", options: { extract: false } }] });
  const hits = r.findings.filter((f) => f.attack === "markup-only");
  assert.ok(hits.length > 0, formatAuditReport(r));
  assert.equal(hits[0]!.score, 0.2);
  assert.deepEqual(Object.keys(hits[0]!.components!).sort(), ["exact", "format"]);
});

test("rows the reward's schemas refuse are not audited", async () => {
  await assert.rejects(auditReward([ex("bad", "p", " ")], { verifier: "exact" }), /row 1 \(bad\): field "answer": the reference answer is empty/);
  await assert.rejects(auditReward(mathRows, { verifier: "exact" }, { attacks: ["nope"] }), /unknown attack "nope"; attacks: empty, /);
});

test("rlvr verify-audit --attack: a plugin's weak reward is reported with exit 1; a sound one exits 0", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-audit-"));
  try {
    const rows = join(dir, "rows.jsonl");
    writeFileSync(rows, mathRows.map((e) => JSON.stringify({ prompt: e.prompt, answer: e.answer })).join("\n") + "\n");
    const plugin = new URL("./fixtures/schema-rewards.ts", import.meta.url).pathname;
    const run = (...args: string[]) => spawnSync(process.execPath, ["bin/rlvr.js", "verify-audit", "--attack", rows, ...args], { encoding: "utf8", env: { ...process.env, RLVR_FROM_SOURCE: "1", RLVR_ENGINE_PROBE: "off" } });
    const weak = run("--reward", "fixture-has-digit", "--plugin", plugin, "--attacks", "empty,one-digit");
    assert.equal(weak.status, 1, weak.stderr);
    assert.match(weak.stdout, /scored above 0 — one-digit 29\n/);
    assert.match(weak.stdout, /\none-digit +1 \(rows-1\) +1 +"0"\n/);
    // In-process (one spawn is enough to check the wiring and the exit code).
    let out = "";
    assert.equal(await runAttackAudit(rows, { reward: "{verifier: exact, options: {extract: false}}", json: true }, (s) => void (out += s)), 0);
    assert.deepEqual(JSON.parse(out).findings, []);
    await assert.rejects(runAttackAudit(rows, {}), /^Error: rlvr verify-audit --attack: give --reward/);
    // A run config: its reward (a module with partial credit for any digit of the prompt) and data.
    out = "";
    assert.equal(await runAttackAudit("examples/custom-reward/train.jsonl", { reward: "examples/custom-reward/config.yaml", limit: 3, attacks: "empty,one-digit", json: true }, (s) => void (out += s)), 3 * 2);
    assert.ok(JSON.parse(out).findings.every((f: { attack: string; score: number }) => f.attack === "one-digit" && f.score === 0.1));
    await assert.rejects(runAttackAudit(rows, { reward: "{verifier: exact, weight: 2}" }), /^Error: --reward at reward: Unrecognized key: "weight"/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
