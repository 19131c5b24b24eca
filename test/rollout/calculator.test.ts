import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { calculate, CalculatorError, evaluateExpression } from "../../src/rollout/tools/calculator.ts";

test("calculator: precedence, associativity, unary minus, parentheses, exact big integers", () => {
  const cases: [string, string][] = [
    ["2*3", "6"],
    ["12*7-30", "54"],
    ["1+2*3", "7"],
    ["(1+2)*3", "9"],
    ["10-4-3", "3"],
    ["2^3^2", "512"],
    ["2**10", "1024"],
    ["-3^2", "-9"],
    ["(-3)^2", "9"],
    ["--4", "4"],
    ["7/2", "3.5"],
    ["1/3", "0.3333333333"],
    ["2/3", "0.6666666667"],
    ["-2/3", "-0.6666666667"],
    ["1/3*3", "1"],
    ["0.1+0.2", "0.3"],
    ["7%3", "1"],
    ["-7%3", "-1"],
    ["2^-2", "0.25"],
    [" 12 ×  3 ÷ 4 ", "9"],
    ["99999999999999999999*99999999999999999999", "9999999999999999999800000000000000000001"],
  ];
  for (const [e, want] of cases) assert.equal(calculate(e), want, e);
});

test("calculator: rejects bad input with CalculatorError (no eval, no other errors)", () => {
  const bad = [
    "",
    "   ",
    "2+",
    "*3",
    "(1+2",
    "1+2)",
    "()",
    "1/0",
    "5%0",
    "0^-1",
    "2^0.5",
    "2^100000",
    "9^9^9",
    "abc",
    "process.exit(1)",
    "constructor",
    "__proto__",
    "1;2",
    "1e5",
    "0x10",
    "2 3",
    "(".repeat(100) + "1" + ")".repeat(100),
    "-".repeat(100) + "1",
    "1+".repeat(200) + "1",
  ];
  for (const e of bad) assert.throws(() => calculate(e), CalculatorError, JSON.stringify(e));
});

test("calculator: agrees with BigInt arithmetic on random integer expressions (+ − ×)", () => {
  const expr = fc.letrec<{ e: [string, bigint] }>((tie) => ({
    e: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.bigInt({ min: 0n, max: 10n ** 12n }).map((n): [string, bigint] => [n.toString(), n]),
      fc.tuple(tie("e"), fc.constantFrom("+", "-", "*"), tie("e")).map(([[a, x], op, [b, y]]): [string, bigint] => [`(${a})${op}(${b})`, op === "+" ? x + y : op === "-" ? x - y : x * y]),
    ),
  })).e;
  fc.assert(
    fc.property(expr, ([s, v]) => {
      if (s.length > 256) return;
      assert.equal(calculate(s), v.toString());
    }),
    { numRuns: 300 },
  );
});

test("calculator: junk strings either evaluate or throw CalculatorError", () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 40, unit: fc.constantFrom(..."0123456789+-*/%^(). abc×÷−") }), (s) => {
      try {
        const v = evaluateExpression(s);
        assert.ok(v.d > 0n);
      } catch (e) {
        assert.ok(e instanceof CalculatorError, `${JSON.stringify(s)} threw ${String(e)}`);
      }
    }),
    { numRuns: 1000 },
  );
});
