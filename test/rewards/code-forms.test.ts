// The code verifier's test forms and dataset formats without a sandbox: every unknown form is an
// error naming the field (never an empty test), each public format converts to the tests its
// benchmark runs, and the trusted comparisons keep integers exact and tolerances relative.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseCodeJson, parseCodeTests } from "../../src/rewards/code/forms.ts";
import { codeExampleSchema, codeSpecOf, solutionCode, unpickleString } from "../../src/rewards/code/formats.ts";
import { equalsExpected, decodeValue } from "../../src/rewards/code/values.ts";
import { parseJsAssert, splitSide, throwsHolds } from "../../src/rewards/code/js-assert.ts";
import { inflateSync } from "node:zlib";
import "../../src/rewards/verifiers.ts";
import { getVerifier } from "../../src/rewards/registry.ts";

/** The attack round's forms: each must be refused with a message naming the field. */
const REFUSED: [unknown, RegExp][] = [
  [["assert add(1, 2) == 3"], /^Error: tests\[0\]: a string is not a test form this verifier knows \(MBPP asserts need format: mbpp/],
  [[{ input: "1 2", expected_output: "3" }], /^Error: tests\[0\]\.expected_output: unknown key .*\{"input", "output"\}/],
  [[{ stdin: "1 2", stdout: "3" }], /^Error: tests\[0\]: no test form has the keys "stdin", "stdout" \(stdin\/stdout tests are \{"input", "output"\}\)/],
  [[{ test: "assert add(1, 2) == 3" }], /^Error: tests\[0\]: .*HumanEval's "test".*format: humaneval/],
  [[{ call: "add(1, 2)", output: 3 }], /^Error: tests\[0\]\.output: unknown key "output" in a call test \(a call test's value is "expected"/],
  [[{ call: "add(1, 2)" }], /^Error: tests\[0\]\.expected: a call test needs "expected"/],
  [[{ output: "3" }], /^Error: tests\[0\]\.input: missing/],
  [[{ input: "1 2\n" }], /^Error: tests\[0\]\.output: missing/],
  [[{ assert: "" }], /^Error: tests\[0\]\.assert:/],
  [[{ call: "f()", expected: 2 ** 80 }], /^Error: tests\[0\]\.expected: .*beyond ±2\^53/],
  [[{ call: "f()", expected: 1, tolerance: -1 }], /^Error: tests\[0\]\.tolerance:/],
  [[{ input: "", output: "" }, { input: "x", output: "  \n" }], /^Error: tests: every stdin\/stdout test expects empty output/],
  [[], /^Error: tests: no tests/],
  [[null], /^Error: tests\[0\]: expected a test object/],
  ["[]", /^Error: tests: expected a list/],
];

test("an unknown test form is an error naming the field, never an empty test", async () => {
  for (const [tests, want] of REFUSED) assert.throws(() => parseCodeTests(tests), want, JSON.stringify(tests));
  // …also at grade time through the verifier, before anything runs.
  const v = getVerifier("code");
  for (const [tests, want] of REFUSED.slice(0, 6)) {
    await assert.rejects(Promise.resolve().then(() => v.verify("print(3)", { id: "r", prompt: "", answer: "", task: "code", meta: { tests } })), new RegExp(`^Error: example r: ${want.source.slice(8)}`));
  }
  // …and at load time through the example schema.
  const bad = codeExampleSchema.safeParse({ meta: { tests: ["assert add(1, 2) == 3"] } });
  assert.equal(bad.success, false);
  assert.match(bad.error!.issues[0]!.message, /tests\[0\]: a string/);
  assert.deepEqual(bad.error!.issues[0]!.path, ["meta", "tests[0]"]);
  assert.equal(codeExampleSchema.safeParse({ meta: { tests: [{ call: "add(1, 2)", expected: 3 }] } }).success, true);
  assert.equal(codeExampleSchema.safeParse({ answer: JSON.stringify([{ input: "1", output: "1" }]) }).success, true);
  assert.match(codeExampleSchema.safeParse({ meta: { question: "x" } }).error!.issues[0]!.message, /no tests: a code row has one of tests \(rlvr\), test_list \(mbpp\)/);
});

test("the valid forms pass unchanged; JSON with big integers is parsed exactly", () => {
  const ok = [{ input: "1 2\n", output: "3" }, { call: "f()", expected: null }, { assert: "assert f() is None", name: "n" }, { call: "g()", expected: 2n ** 70n, tolerance: 1e-9, absTolerance: 0 }];
  assert.deepEqual(parseCodeTests(ok), ok);
  const row = parseCodeJson('{"expected": 15511210043330985984000000, "f": 2.0, "z": -0, "s": 9007199254740991}') as Record<string, unknown>;
  assert.equal(row.expected, 15511210043330985984000000n);
  assert.equal(row.f, 2);
  assert.ok(Object.is(row.z, -0));
  assert.equal(row.s, 9007199254740991);
});

test("integers are exact end to end and tolerance is relative without a floor of 1", () => {
  const fact25 = 15511210043330985984000000n;
  assert.equal(equalsExpected({ t: "int", v: fact25 }, fact25), true);
  assert.equal(equalsExpected({ t: "int", v: fact25 + 10n ** 9n }, fact25), false, "fact(25) + 10**9 is not fact(25)");
  assert.equal(equalsExpected(3, 3n), true);
  assert.equal(equalsExpected({ t: "float", v: 2, repr: "2.0" }, 2), true, "Python: 2.0 == 2");
  assert.equal(equalsExpected({ t: "float", v: 2 ** 60, repr: "1.152921504606847e+18" }, 2n ** 60n), true, "Python compares int and float exactly");
  assert.equal(equalsExpected({ t: "float", v: 2 ** 60, repr: "1.152921504606847e+18" }, 2n ** 60n + 1n), false);
  assert.equal(equalsExpected(0.0105, 0.01, 0.1), true);
  assert.equal(equalsExpected(0.5, 0.01, 0.1), false, "no absolute floor: 0.5 is not within 10% of 0.01");
  assert.equal(equalsExpected(0.001, 0, 1e-6), false, "relative to 0 means exact");
  assert.equal(equalsExpected(0.001, 0, { abs: 1e-2 }), true, "an explicit absTolerance");
  assert.equal(equalsExpected(true, 1), false);
  // Integral floats and -0 keep their type on the wire.
  assert.deepEqual(decodeValue({ $: "float", v: "-0.0" }), { t: "float", v: -0, repr: "-0.0" });
  assert.equal(decodeValue({ $: "float", v: "2.0x" }) !== null && (decodeValue({ $: "float", v: "2.0x" }) as { t: string }).t, "opaque");
});

test("JS asserts: RegExp literals are data, await is explicit, globals named by the task are the solution's", () => {
  assert.deepEqual(splitSide("/^add\\d+$/.test(name(1))").pieces, ["name(1)"]);
  assert.deepEqual(splitSide("[a, /x[/]y/g].length / size(2)").pieces, ["a", "size(2)"]);
  assert.deepEqual(splitSide("await later(4)").pieces, [{ x: "later(4)", await: true }]);
  assert.equal(splitSide("await later(4)").expr, "__rlvr_v[0]");
  const own = parseJsAssert("assert.strictEqual(parseInt('42'), 42)");
  assert.deepEqual(own[0]!.actual.pieces, [{ x: "parseInt('42')", own: ["parseInt"] }]);
  const inner = parseJsAssert("assert.strictEqual(String(parseInt('42')), '42')")[0]!;
  assert.deepEqual(inner.actual.pieces, [{ x: "parseInt('42')", own: ["parseInt"] }]);
  assert.equal(inner.actual.expr, "String(__rlvr_v[0])");
  assert.deepEqual(parseJsAssert("assert.strictEqual(Number('7'), 7)")[0]!.actual.pieces, [{ x: "Number('7')", own: ["Number"] }]);
  assert.throws(() => parseJsAssert("assert.strictEqual(1 + 1, 2)"), /calls nothing of the solution/);
  assert.throws(() => parseJsAssert("assert.throws(() => { throw new Error('x'); })"), /uses nothing of the solution/);
  const t = parseJsAssert("assert.throws(() => boom(-1), RangeError)")[0]!;
  assert.equal(t.validator, "RangeError");
  assert.match(String(t.actual.pieces[0]), /typeof boom !== "function"/);
});

test("assert.throws validators are applied outside; ReferenceErrors and missing names never pass", () => {
  const threw = (chain: string[], str: string, props: Record<string, unknown> = {}) =>
    decodeValue({ $: "dict", v: [["threw", true], ["chain", chain], ["str", str], ["props", { $: "dict", v: Object.entries(props) }]] });
  const range = threw(["RangeError", "Error", "Object"], "RangeError: negative", { message: "negative", name: "RangeError" });
  const ref = threw(["ReferenceError", "Error", "Object"], "ReferenceError: boom is not defined", { message: "boom is not defined" });
  assert.equal(throwsHolds("throws", range).ok, true);
  assert.equal(throwsHolds("throws", ref).ok, false);
  assert.equal(throwsHolds("throws", range, "RangeError").ok, true);
  assert.equal(throwsHolds("throws", range, "TypeError").ok, false);
  assert.equal(throwsHolds("throws", range, "/negative/").ok, true);
  assert.equal(throwsHolds("throws", range, "/positive/").ok, false);
  assert.equal(throwsHolds("throws", range, "{ name: 'RangeError', message: /neg/ }").ok, true);
  assert.equal(throwsHolds("throws", range, "{ name: 'TypeError' }").ok, false);
  assert.equal(throwsHolds("throws", range, "(e) => e instanceof RangeError && e.message === 'negative'").ok, true);
  assert.equal(throwsHolds("throws", range, "(e) => e instanceof TypeError").ok, false);
  assert.equal(throwsHolds("throws", range, "(e) => 1").ok, false, "a validation function must return true");
  assert.equal(throwsHolds("throws", range, "'a message'").ok, true);
  assert.equal(throwsHolds("throws", decodeValue({ $: "dict", v: [["missing", "boom"]] })).ok, false);
  assert.equal(throwsHolds("throws", decodeValue({ $: "dict", v: [["threw", false]] })).ok, false);
  assert.throws(() => throwsHolds("throws", range, "(e) => check(e)"), /may not use the solution's names/);
});

/** LiveCodeBench's release encoding of two stdin cases: base64(zlib(pickle(json))). */
const LCB_PRIVATE = "eJxrYJlawwABPRXR1UqZeQWlJUpWCkrGMXkmMXlKOgpK+aUlUDFziEBJanFJSWVBKkiouCQlM0+pVkcBSauhQUyerhG6ZgucmmOn6AEAP1IoKA==";
/** A pickle of os.system: must be refused, never unpickled. */
const PICKLED_CALLABLE = "eJxrYJkqwgABPawF+cWZFVN62Iori0tSc6dMnqIHAHlUCaY=";

test("each public format converts to the tests its benchmark runs", () => {
  const mbpp = codeSpecOf({ task_id: 1, text: "t", code: "", test_list: ["assert f(1) == 2", "assert f(2) == 3"], test_setup_code: "import math", challenge_test_list: ["assert f(10) == 11"] });
  assert.equal(mbpp.format, "mbpp");
  assert.deepEqual(mbpp.tests, [{ assert: "assert f(1) == 2" }, { assert: "assert f(2) == 3" }]);
  const challenge = codeSpecOf({ test_list: ["assert f(1) == 2"], challenge_test_list: ["assert f(10) == 11"] }, { challengeTests: true });
  assert.deepEqual(challenge.tests, [{ assert: "assert f(1) == 2" }, { assert: "assert f(10) == 11" }]);
  assert.equal(solutionCode(mbpp, "def f(x):\n    return x + 1\n"), "import math\ndef f(x):\n    return x + 1\n");
  assert.throws(() => codeSpecOf({ test_list: ["f(1) == 2"] }), /^Error: test_list\[0\]: expected an "assert …" string/);

  const he = codeSpecOf({ task_id: "x/0", prompt: "from typing import List\n\ndef inc(xs: List[int]) -> List[int]:\n    \"\"\"Add one.\"\"\"\n", test: "\n\nMETADATA = {}\n\n\ndef check(candidate):\n    assert candidate([1]) == [2]\n", entry_point: "inc" });
  assert.equal(he.tests.length, 1);
  assert.match(he.tests[0]!.assert!, /check\(inc\)\n$/);
  assert.match(solutionCode(he, "    return [x + 1 for x in xs]\n"), /^from typing import List[\s\S]*"""Add one\."""\n    return/);
  assert.equal(solutionCode(he, "def inc(xs):\n    return xs\n"), `${he.prompt}\ndef inc(xs):\n    return xs\n`);

  const apps = codeSpecOf({ problem_id: 7, input_output: JSON.stringify({ fn_name: "fact", inputs: [[25], [2.0, "a"]], outputs: [[1], [2]] }).replace("[2,", "[2.0,") });
  assert.equal(apps.tests[0]!.call, '(Solution().fact if "Solution" in globals() else fact)(25)');
  assert.equal(apps.tests[1]!.call, '(Solution().fact if "Solution" in globals() else fact)(2.0, "a")', "argument numbers keep their text: 2.0 stays a float");
  assert.deepEqual(apps.tests[0]!.expected, [1]);
  assert.equal(apps.tests[0]!.alsoExpected, 1);
  const big = codeSpecOf({ input_output: '{"fn_name": "fact", "inputs": [[25]], "outputs": [15511210043330985984000000]}' });
  assert.equal(big.tests[0]!.expected, 15511210043330985984000000n);
  const stdio = codeSpecOf({ input_output: { inputs: ["1 2\n", ["3 4", "5"]], outputs: ["3\n", ["7", "5"]] } }, { format: "taco" });
  assert.deepEqual(stdio.tests, [{ input: "1 2\n", output: "3\n" }, { input: "3 4\n5", output: "7\n5" }]);
  assert.throws(() => codeSpecOf({ input_output: '{"inputs": [], "outputs": []}' }), /^Error: input_output: expected non-empty/);
  assert.throws(() => codeSpecOf({ input_output: '{"inputs": ["1"], "outputs": ["1"], "fn": "x"}' }), /^Error: input_output\.fn: unknown key/);

  const cc = codeSpecOf({ name: "p", public_tests: { input: ["1\n"], output: ["2\n"] }, private_tests: { input: [], output: [] }, generated_tests: { input: ["5\n"], output: ["6\n"] } });
  assert.deepEqual(cc.tests, [{ input: "1\n", output: "2\n" }, { input: "5\n", output: "6\n" }]);

  const lcb = codeSpecOf({ question_id: "1", public_test_cases: JSON.stringify([{ input: "1\n2\n", output: "3\n", testtype: "stdin" }]), private_test_cases: LCB_PRIVATE, metadata: "{}" });
  assert.deepEqual(lcb.tests, [{ input: "1\n2\n", output: "3\n" }, { input: "3\n4\n", output: "7\n" }, { input: "10\n-2\n", output: "8\n" }]);
  const fn = codeSpecOf({ public_test_cases: [{ input: "[1, 2.0]\n3", output: "[4, 5.0]", testtype: "functional" }], metadata: { func_name: "addAll" } });
  assert.equal(fn.tests[0]!.call, '(Solution().addAll if "Solution" in globals() else addAll)([1, 2.0], 3)');
  assert.deepEqual(fn.tests[0]!.expected, [4, 5]);
  assert.throws(() => codeSpecOf({ public_test_cases: [{ input: "1", output: "1", testtype: "functional" }], metadata: "{}" }), /^Error: metadata\.func_name:/);
  assert.throws(() => codeSpecOf({ public_test_cases: [{ input: "1", output: "1", testtype: "stdio" }] }), /^Error: public_test_cases\[0\]\.testtype/);
  assert.throws(() => codeSpecOf({ public_test_cases: "[]", private_test_cases: PICKLED_CALLABLE }), /^Error: private_test_cases: neither JSON nor .*not a pickled string/);
  assert.throws(() => unpickleString(inflateSync(Buffer.from(PICKLED_CALLABLE, "base64"))), /not a pickled string/);

  // Formats are named or recognised; conflicting or unknown ones are errors.
  assert.throws(() => codeSpecOf({ tests: [], test_list: [] }), /^Error: format: the row has fields of several formats/);
  assert.throws(() => codeSpecOf({ test_list: ["assert f()"] }, { format: "apps" }), /^Error: input_output:/);
  assert.throws(() => codeSpecOf({ test_list: ["assert f()"], format: "mbpp" }, { format: "apps" }), /^Error: format: the row says/);
  assert.throws(() => codeSpecOf({ test_list: ["assert f()"], format: "leetcode" }), /^Error: format: unknown format "leetcode"/);
  assert.throws(() => codeSpecOf({ test_list: ["assert f()"], language: "javascript" }), /^Error: language: format mbpp tests Python code/);
});
