// The verify command module, driven through commander in a child process (stdin and files).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const moduleUrl = new URL("../../src/cli/commands/verify.ts", import.meta.url).href;
const runner = `import("commander").then(async ({ Command }) => {
  const { register } = await import(${JSON.stringify(moduleUrl)});
  const p = new Command(); register(p);
  await p.parseAsync(["node", "rlvr", ...JSON.parse(process.env.RLVR_ARGS)]);
});`;

function cli(args: string[], stdin = "") {
  const r = spawnSync(process.execPath, ["--import", "tsx", "-e", runner], { input: stdin, encoding: "utf8", env: { ...process.env, RLVR_ARGS: JSON.stringify(args) } });
  const lines = (): Record<string, unknown>[] => r.stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code: r.status, get out() { return lines(); }, stdout: r.stdout, err: r.stderr };
}

test("rlvr verify choice reads stdin; bad lines name their line number", () => {
  const r = cli(["verify", "choice"], ['{"response": "Answer: (B)", "reference": "B"}', "", "{oops", '{"response": "C"}'].join("\n"));
  assert.equal(r.code, 1);
  assert.equal(r.out.length, 3);
  assert.equal(r.out[0]!.correct, true);
  assert.equal(r.out[0]!.extracted, "B");
  assert.equal(r.out[1]!.line, 3);
  assert.match(String(r.out[1]!.error), /invalid JSON/);
  assert.match(r.err, /line 3/);
  assert.match(String(r.out[2]!.error), /"reference"/);
});

test("rlvr verify ifeval and code read a file", () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-cli-"));
  try {
    const f = join(dir, "in.jsonl");
    writeFileSync(f, JSON.stringify({ response: "all lower, no caps", constraints: [{ type: "lowercase" }, { type: "no_commas" }] }) + "\n");
    const r = cli(["verify", "ifeval", f]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out[0]!.reward, 0); // the reward: all or nothing
    assert.equal(cli(["verify", "ifeval-reference", f]).out[0]!.reward, 0.5); // the reference: fraction satisfied
    const c = join(dir, "code.jsonl");
    writeFileSync(c, JSON.stringify({ response: "function f(x) { return x + 1; }", tests: [{ call: "f(1)", expected: 2 }], language: "javascript" }) + "\n");
    const rc = cli(["verify", "code", c]);
    assert.equal(rc.out[0]!.correct, true, rc.stdout);
    assert.equal(cli(["verify", "nope"]).code !== 0, true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("rlvr verify-audit reports false-negative and false-positive rates", () => {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-cli-"));
  try {
    const f = join(dir, "labeled.jsonl");
    const rows = [
      { response: "Answer: A", reference: "A", equivalent: true },
      { response: "Answer: B", reference: "A", equivalent: false },
      { response: "I pick nothing", reference: "A", equivalent: true },
      { response: "Answer: C", reference: "C", equivalent: false },
    ];
    writeFileSync(f, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const r = cli(["verify-audit", f, "--kind", "choice"]);
    const report = JSON.parse(r.stdout) as { n: number; falseNegativeRate: number; falsePositiveRate: number; falseNegatives: { line: number }[] };
    assert.equal(report.n, 4);
    assert.equal(report.falseNegativeRate, 0.5);
    assert.equal(report.falsePositiveRate, 0.5);
    assert.equal(report.falseNegatives[0]!.line, 3);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
