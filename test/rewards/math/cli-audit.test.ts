// `rlvr verify-audit` on a labelled file with a "category" field reports per-category agreement,
// false positives and false negatives (driven through commander in a child process).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const moduleUrl = new URL("../../../src/cli/commands/verify.ts", import.meta.url).href;
const runner = `import("commander").then(async ({ Command }) => {
  const { register } = await import(${JSON.stringify(moduleUrl)});
  const p = new Command(); register(p);
  await p.parseAsync(["node", "rlvr", ...JSON.parse(process.env.RLVR_ARGS)]);
});`;

test("rlvr verify-audit: per-category counts when lines have a category, none otherwise", () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-audit-"));
  try {
    const rows = [
      { response: "$\\boxed{1}\\boxed{2}$", reference: "\\boxed{1,2}", equivalent: true, category: "multi_boxed" },
      { response: "$\\boxed{1}\\boxed{2}$", reference: "1", equivalent: false, category: "multi_boxed" },
      { response: "The code is AZYUK2A", reference: "2", equivalent: false, category: "digit_in_word" },
      // deliberately mislabelled: counted as a false positive / false negative of its category
      { response: "\\boxed{0.5}", reference: "\\frac12", equivalent: false, category: "near_miss" },
      { response: "\\boxed{0.5}", reference: "0.05", equivalent: true, category: "near_miss" },
    ];
    const f = join(dir, "audit.jsonl");
    writeFileSync(f, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const r = spawnSync(process.execPath, ["--import", "tsx", "-e", runner], { encoding: "utf8", env: { ...process.env, RLVR_ARGS: JSON.stringify(["verify-audit", f]) } });
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { n: number; byCategory: Record<string, { n: number; agree: number; falsePositives: number; falseNegatives: number }> };
    assert.equal(report.n, 5);
    assert.deepEqual(report.byCategory, {
      multi_boxed: { n: 2, agree: 2, falsePositives: 0, falseNegatives: 0 },
      digit_in_word: { n: 1, agree: 1, falsePositives: 0, falseNegatives: 0 },
      near_miss: { n: 2, agree: 0, falsePositives: 1, falseNegatives: 1 },
    });
    const g = join(dir, "plain.jsonl");
    writeFileSync(g, JSON.stringify({ response: "\\boxed{3}", reference: "3", equivalent: true }) + "\n");
    const r2 = spawnSync(process.execPath, ["--import", "tsx", "-e", runner], { encoding: "utf8", env: { ...process.env, RLVR_ARGS: JSON.stringify(["verify-audit", g]) } });
    assert.equal(r2.status, 0, r2.stderr);
    assert.equal("byCategory" in (JSON.parse(r2.stdout) as object), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
