import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCodeTests, extractCode } from "../../src/rewards/code/run-tests.ts";
import { sandboxSupport } from "../../src/rewards/code/probe.ts";

const support = sandboxSupport();
const hasPython = support.python !== null;
const fast = { timeoutMs: 1500, memoryMb: 128 };

test("extractCode prefers the last block tagged with the language", () => {
  const r = "```js\nA\n```\ntext\n```python\nB\n```\n```\nC\n```";
  assert.equal(extractCode(r, "python"), "B\n");
  assert.equal(extractCode(r, "javascript"), "A\n");
  assert.equal(extractCode("print(1)", "python"), "print(1)");
});

test("python stdio and function cases, fraction and all-or-nothing", { skip: !hasPython }, async () => {
  const code = "import sys\na, b = map(int, sys.stdin.read().split())\nprint(a + b)\n";
  const r = await runCodeTests(code, [{ input: "1 2", output: "3" }, { input: "2 2", output: "5" }], { language: "python" });
  assert.equal(r.passed, 1);
  assert.equal(r.reward, 0.5);
  const all = await runCodeTests(code, [{ input: "1 2", output: "3\n\n" }, { input: "2 2", output: "5" }], { language: "python", scoring: "all" });
  assert.equal(all.reward, 0);
  const fn = await runCodeTests(
    "def add(a, b):\n    return (a + b, [a])\n",
    [{ call: "add(1, 2)", expected: [3, [1]] }, { assert: "assert add(2, 2)[0] == 4" }, { call: "add(0.1, 0.2)[0]", expected: 0.3, tolerance: 1e-9 }],
    { language: "python" },
  );
  assert.equal(fn.passed, 3, JSON.stringify(fn.cases));
  assert.equal(fn.correct, true);
});

test("javascript stdio and function cases", async () => {
  const r = await runCodeTests(
    "```js\nconst [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a * b);\n```",
    [{ input: "3 4", output: "12" }],
    { language: "javascript" },
  );
  assert.equal(r.correct, true, r.reason);
  const fn = await runCodeTests(
    "function mul(a, b) { return a * b; }\nasync function later(x) { return [x]; }",
    [{ call: "mul(3, 4)", expected: 12 }, { call: "await later(1)", expected: [1] }, { assert: "assert.equal(mul(2, 2), 5)" }, { call: "later(1)", expected: [1] }],
    { language: "javascript" },
  );
  // A Promise is awaited only where the test says so.
  assert.deepEqual(fn.cases.map((c) => c.passed), [true, true, false, false]);
  assert.match(fn.cases[3]!.reason, /Promise/);
  const exportsStyle = await runCodeTests("module.exports = { sq: (x) => x * x };", [{ call: "sq(5)", expected: 25 }], { language: "javascript" });
  assert.equal(exportsStyle.correct, true, exportsStyle.reason);
});

test("a solution cannot read the expected values or forge results", { skip: !hasPython }, async () => {
  const cheat =
    "import os, json\n" +
    "exists = os.path.exists('tests.json')\n" +
    "print('\\n@@rlvr-0@@' + json.dumps({'i': 0, 'ok': True}))\n" +
    "def f():\n    return 'tests.json visible' if exists else 'hidden'\n";
  const r = await runCodeTests(cheat, [{ call: "f()", expected: "tests.json visible" }], { language: "python" });
  assert.equal(r.correct, false);
  assert.match(r.cases[0]!.reason, /hidden/);
});

// ---- hostile programs: each is stopped or refused, and this process carries on ----

test("hostile: infinite loops are killed at the wall-clock limit", async () => {
  const t0 = performance.now();
  const js = await runCodeTests("while (true) {}", [{ input: "", output: "x" }], { language: "javascript", limits: fast });
  assert.equal(js.cases[0]!.reason, "timeout");
  if (hasPython) {
    const py = await runCodeTests("while True:\n    pass\n", [{ call: "1", expected: 1 }], { language: "python", limits: fast });
    assert.equal(py.cases[0]!.reason, "timeout");
  }
  assert.ok(performance.now() - t0 < 8000);
});

test("hostile: memory bombs are stopped by the memory limit", async () => {
  const js = await runCodeTests("const a = []; while (true) a.push(new Array(1e6).fill(1.5));", [{ input: "", output: "x" }], {
    language: "javascript",
    limits: { timeoutMs: 10000, memoryMb: 128 },
  });
  assert.equal(js.correct, false);
  assert.notEqual(js.cases[0]!.reason, "timeout");
  const buf = await runCodeTests("const a = []; while (true) a.push(Buffer.alloc(64 << 20, 1)); ", [{ input: "", output: "x" }], {
    language: "javascript",
    limits: { timeoutMs: 10000, memoryMb: 128 },
  });
  assert.equal(buf.correct, false);
  assert.notEqual(buf.cases[0]!.reason, "timeout");
  if (hasPython) {
    const py = await runCodeTests("a = []\nwhile True:\n    a.append(bytearray(32 << 20))\n", [{ input: "", output: "x" }], {
      language: "python",
      limits: { timeoutMs: 10000, memoryMb: 128 },
    });
    assert.equal(py.correct, false);
    assert.match(py.cases[0]!.reason, /MemoryError|killed|exit code/);
  }
});

test("hostile: fork bombs are refused or contained", async () => {
  const js = await runCodeTests(
    "const cp = require('child_process'); let n = 0; try { while (true) { cp.spawn(process.execPath, ['-e', 'setInterval(()=>{},1000)']); n++; } } catch (e) { console.log('refused ' + n); }",
    [{ input: "", output: "spawned" }],
    { language: "javascript", limits: fast },
  );
  assert.equal(js.correct, false);
  if (hasPython) {
    // Under bubblewrap fork works up to the sandbox's own process limit (then the bomb is killed
    // at the timeout); in the fallback the audit hook refuses it.
    const py = await runCodeTests(
      "import os\nn = 0\ntry:\n    while True:\n        os.fork()\n        n += 1\nexcept Exception as e:\n    print('refused', n, e)\n",
      [{ input: "", output: "forked" }],
      { language: "python", limits: fast },
    );
    assert.equal(py.correct, false);
    if (!support.bwrap) assert.match(py.cases[0]!.reason, /refused 0/);
    const sub = await runCodeTests("import subprocess\nprint(subprocess.run(['echo', 'hi']).returncode)\n", [{ input: "", output: "0" }], {
      language: "python",
      limits: fast,
    });
    assert.equal(sub.correct, false);
  }
});

test("hostile: network access is refused", async () => {
  const js = await runCodeTests(
    "fetch('http://1.1.1.1/').then(() => console.log('NET-OK'), () => console.log('NET-FAIL'));",
    [{ input: "", output: "NET-OK" }],
    { language: "javascript", limits: { timeoutMs: 4000 } },
  );
  assert.equal(js.correct, false);
  if (hasPython) {
    const py = await runCodeTests(
      "import socket\ns = socket.create_connection(('1.1.1.1', 80), timeout=2)\nprint('NET-OK')\n",
      [{ input: "", output: "NET-OK" }],
      { language: "python", limits: { timeoutMs: 4000 } },
    );
    assert.equal(py.correct, false);
    assert.match(py.cases[0]!.reason, /refused|exit code/);
  }
});

test("hostile: writing outside the working directory never reaches the host", async () => {
  const outside = mkdtempSync(join(tmpdir(), "rlvr-escape-test-"));
  const target = join(outside, "escaped.txt");
  const project = join(process.cwd(), "escaped-from-sandbox.txt");
  const hostTmp = join(tmpdir(), `rlvr-escaped-${process.pid}.txt`);
  const paths = JSON.stringify([target, project, hostTmp]);
  try {
    const js = await runCodeTests(
      `const fs = require('fs'); for (const p of ${paths}) { try { fs.writeFileSync(p, 'x'); console.log('WROTE ' + p); } catch (e) { console.log('refused'); } }`,
      [{ input: "", output: "refused\nrefused\nrefused" }],
      { language: "javascript", limits: fast },
    );
    assert.equal(js.correct, true, js.reason);
    if (hasPython) {
      // Under bubblewrap /tmp is the sandbox's own: the write to it succeeds and vanishes.
      const py = await runCodeTests(
        `for p in ${paths}:\n    try:\n        open(p, 'w').write('x')\n        print('WROTE' if p.startswith('/tmp/') else 'ESCAPED', p)\n    except Exception:\n        print('refused')\n` +
          "open('inside.txt', 'w').write('ok')\nprint(open('inside.txt').read())\n",
        [{ input: "", output: "x" }],
        { language: "python", limits: fast },
      );
      assert.doesNotMatch(py.cases[0]!.reason, /ESCAPED/);
      assert.match(py.cases[0]!.reason, /refused\\nrefused\\n(refused|WROTE \S+)\\nok/);
    }
    assert.equal(existsSync(target), false);
    assert.equal(existsSync(project), false);
    assert.equal(existsSync(hostTmp), false);
  } finally {
    rmSync(outside, { recursive: true, force: true });
  }
});

test("hostile: huge output is cut off and the program killed", async () => {
  const t0 = performance.now();
  const js = await runCodeTests("const s = 'x'.repeat(1 << 16); while (true) require('fs').writeSync(1, s);", [{ input: "", output: "x" }], {
    language: "javascript",
    limits: { timeoutMs: 8000, maxOutputBytes: 1 << 18 },
  });
  assert.equal(js.cases[0]!.reason, "output limit exceeded");
  // process.stdout.write on a pipe queues in memory when the loop never yields: the program dies
  // at the output cap or at the memory limit, whichever comes first; either way it is stopped.
  const queued = await runCodeTests("const s = 'x'.repeat(1 << 16); while (true) process.stdout.write(s);", [{ input: "", output: "x" }], {
    language: "javascript",
    limits: { timeoutMs: 8000, maxOutputBytes: 1 << 18 },
  });
  assert.match(queued.cases[0]!.reason, /^(output limit exceeded|killed by SIG\w+|exit code)/);
  if (hasPython) {
    const py = await runCodeTests("import sys\nwhile True:\n    sys.stdout.write('y' * 65536)\n", [{ input: "", output: "x" }], {
      language: "python",
      limits: { timeoutMs: 8000, maxOutputBytes: 1 << 18 },
    });
    assert.equal(py.cases[0]!.reason, "output limit exceeded");
  }
  assert.ok(performance.now() - t0 < 8000, "output cap should stop the program well before the timeout");
});

test("the working directory is private and thrown away after the run", async () => {
  const r = await runCodeTests("console.log(process.cwd())", [{ input: "", output: "?" }], { language: "javascript" });
  const dir = r.cases[0]!.reason.match(/"(.*)\\n"/)?.[1];
  if (support.bwrap) assert.equal(dir, "/work", r.cases[0]!.reason);
  else assert.ok(dir && dir.includes("rlvr-code-") && !existsSync(dir), r.cases[0]!.reason);
  const { makeWorkdir } = await import("../../src/rewards/code/sandbox.ts");
  const wd = makeWorkdir({ "a.py": "print(1)" });
  assert.ok(existsSync(wd.path));
  wd.dispose();
  assert.equal(existsSync(wd.path), false);
});

test("without a network namespace, JS sockets are refused in-process", async () => {
  const { runSandboxed, makeWorkdir } = await import("../../src/rewards/code/sandbox.ts");
  const wd = makeWorkdir({
    "p.js": "fetch('http://1.1.1.1/').then(() => console.log('NET-OK'), (e) => console.log(String(e.message)));\ntry { require('net').connect(80, '1.1.1.1'); } catch (e) { console.log(e.message); }",
  });
  try {
    const r = await runSandboxed({ language: "javascript", workdir: wd.path, args: ["p.js"], limits: { timeoutMs: 4000 } }, { ...support, bwrap: null, unshareArgs: [], netns: false, pidns: false });
    assert.doesNotMatch(r.stdout, /NET-OK/);
    assert.equal(r.stdout.match(/network access refused/g)?.length, 2, r.stdout + r.stderr);
  } finally {
    wd.dispose();
  }
});

test("rlvr doctor reports the layers this machine has and runs a program per language", { timeout: 120_000 }, async () => {
  const { spawnSync } = await import("node:child_process");
  const bin = new URL("../../bin/rlvr.js", import.meta.url).pathname;
  const r = spawnSync(process.execPath, [bin, "doctor", "--json"], { encoding: "utf8", env: { ...process.env, RLVR_FROM_SOURCE: "1" }, timeout: 110_000 });
  assert.equal(r.status, 0, r.stderr);
  const report = JSON.parse(r.stdout) as { isolation: string; layers: { layer: string; present: boolean }[]; smoke: Record<string, string> };
  assert.equal(report.isolation, support.bwrap ? "bubblewrap" : "fallback");
  assert.equal(report.layers.find((l) => l.layer === "bubblewrap")?.present, support.bwrap !== null);
  assert.match(report.smoke.javascript!, /^ok/);
  if (hasPython) assert.match(report.smoke.python!, /^ok/);
});
