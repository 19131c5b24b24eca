// The trusted half of code grading, without a sandbox: typed values, the comparisons, the split of
// JavaScript asserts into the solution's calls and the checks, the seccomp filter and the root.
import { test } from "node:test";
import assert from "node:assert/strict";
import { realpathSync } from "node:fs";
import { decodeValue, equalsExpected, findOpaque, jsAssertHolds } from "../../src/rewards/code/values.ts";
import { evalSide, parseJsAssert, splitSide } from "../../src/rewards/code/js-assert.ts";
import { DENIED_SYSCALLS, seccompFilter } from "../../src/rewards/code/seccomp.ts";
import { RootBuilder } from "../../src/rewards/code/rootfs.ts";

test("typed values decode strictly; anything malformed or user-defined is opaque", () => {
  assert.deepEqual(decodeValue([1, "a", null, true]), [1, "a", null, true]);
  assert.deepEqual(decodeValue({ $: "int", v: "123456789012345678901234567890" }), { t: "int", v: 123456789012345678901234567890n });
  assert.ok(Number.isNaN(decodeValue({ $: "float", v: "nan" }) as number));
  for (const bad of [{ $: "int", v: "12x" }, { a: 1 }, { $: "dict", v: [[1]] }, { $: "opaque", type: "Any" }, { $: "nope" }]) {
    assert.notEqual(findOpaque(decodeValue(bad)), null, JSON.stringify(bad));
  }
});

test("equalsExpected keeps the old JSON rules and never equals an opaque value", () => {
  assert.equal(equalsExpected({ t: "tuple", v: [1, 2] }, [1, 2]), true);
  assert.equal(equalsExpected(true, 1), false);
  assert.equal(equalsExpected(1, true), false);
  assert.equal(equalsExpected(0.30000000000000004, 0.3, 1e-9), true);
  assert.equal(equalsExpected(0.31, 0.3, 1e-9), false);
  assert.equal(equalsExpected({ t: "dict", v: [[1, "a"], ["b", [2]]] }, { "1": "a", b: [2] }), true);
  assert.equal(equalsExpected({ t: "int", v: 2n ** 60n }, 2 ** 60), true);
  assert.equal(equalsExpected({ t: "opaque", type: "Any" }, 3), false);
  assert.equal(equalsExpected([{ t: "opaque", type: "Any" }], [3]), false);
  assert.equal(equalsExpected({ t: "undefined" }, null), true);
  assert.equal(equalsExpected({ t: "set", v: [1] }, [1]), false);
});

test("node:assert semantics outside the sandbox; opaque values fail negated checks too", () => {
  assert.equal(jsAssertHolds("equal", "3", 3), true);
  assert.equal(jsAssertHolds("strictEqual", "3", 3), false);
  assert.equal(jsAssertHolds("strictEqual", NaN, NaN), true);
  assert.equal(jsAssertHolds("deepStrictEqual", { t: "dict", v: [["a", [1]]] }, { t: "dict", v: [["a", [1]]] }), true);
  assert.equal(jsAssertHolds("deepStrictEqual", [1], ["1"]), false);
  assert.equal(jsAssertHolds("deepEqual", [1], ["1"]), true);
  assert.equal(jsAssertHolds("strictEqual", [1], [1]), false, "two objects are never the same object");
  assert.equal(jsAssertHolds("notEqual", { t: "opaque", type: "V" }, 4), false);
  assert.equal(jsAssertHolds("ok", { t: "opaque", type: "V" }, undefined), false);
  assert.equal(jsAssertHolds("ok", 0, undefined), false);
});

test("JS asserts split into the solution's calls and checks evaluated here", () => {
  const s = splitSide("Math.abs(area(r.x, [1, 2]) - 3.14) < 1e-3");
  assert.deepEqual(s.pieces, ["area(r.x, [1, 2])"]);
  assert.equal(s.expr, "Math.abs(__rlvr_v[0] - 3.14) < 1e-3");
  assert.deepEqual(splitSide("new Stack().push(5)").pieces, ["new Stack().push(5)"]);
  assert.deepEqual(splitSide("{ a: 1, 'add(': [x => x * 2] }").pieces, []);
  assert.deepEqual(splitSide("[1, 2].map((y) => y + 1)").pieces, []);
  assert.throws(() => splitSide("[1, 2].map((y) => add(y, 1))"), /arrow function/);
  assert.equal(evalSide(s, [3.1405]), true);
  assert.equal(evalSide(s, [3]), false);
  assert.deepEqual(evalSide(splitSide("[1, 2].map((y) => y + 1)"), []), [2, 3]);
  const checks = parseJsAssert("assert.strictEqual(add(1, 2), 3); assert.throws(() => add())\nassert(ok(1))");
  assert.deepEqual(
    checks.map((c) => c.method),
    ["strictEqual", "throws", "ok"],
  );
  assert.deepEqual(
    parseJsAssert("const assert = require('node:assert/strict');\nassert.equal(add(1, 2), 3); assert.deepEqual(f(), [1])").map((c) => c.method),
    ["strictEqual", "deepStrictEqual"],
  );
  assert.deepEqual(
    parseJsAssert("const assert = require('assert'); assert.strict.equal(add(1, 2), 3); assert.equal(add(1, 2), 3)").map((c) => c.method),
    ["strictEqual", "equal"],
  );
  assert.throws(() => parseJsAssert("if (add(1, 2) !== 3) throw new Error()"), /unsupported assert form/);
  assert.throws(() => parseJsAssert("assert.equal(add(1, 2), 3) || hack()"), /unsupported assert form/);
});

test("the seccomp filter is a well-formed program refusing the socket calls", () => {
  const f = seccompFilter("x64")!;
  assert.equal(f.length % 8, 0);
  assert.equal(f.length / 8, 3 + 1 + DENIED_SYSCALLS.length + 2);
  assert.equal(f.readUInt32LE(f.length - 4) >>> 0, 0x00050001, "last instruction: return EPERM");
  assert.equal(f.readUInt32LE(f.length - 12) >>> 0, 0x7fff0000, "then: allow");
  // Every jump lands on the deny instruction.
  for (let i = 0; i < f.length / 8 - 2; i++) {
    const code = f.readUInt16LE(i * 8);
    if (code !== 0x15 && code !== 0x35) continue;
    const jt = f.readUInt8(i * 8 + 2);
    const jf = f.readUInt8(i * 8 + 3);
    const target = i + 1 + Math.max(jt, jf);
    assert.equal(target, f.length / 8 - 1, `instruction ${i}`);
  }
  assert.equal(seccompFilter("mips"), null);
});

test("the read-only root holds the interpreter and the symlinks leading to it", () => {
  const plan = new RootBuilder().binary(realpathSync(process.execPath)).plan();
  assert.ok(plan.binds.includes(realpathSync(process.execPath)));
  assert.ok(!plan.binds.some((b) => b === "/" || b === "/usr" || b === "/etc" || b.startsWith("/root") || b.startsWith("/home")), plan.binds.join(" "));
});
