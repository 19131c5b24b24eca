// Rows in the published layouts of MBPP, HumanEval, APPS/TACO, CodeContests and LiveCodeBench
// (written here, not copied), graded through the registry's `code` verifier in the sandbox: a
// correct solution scores 1; a wrong, empty or printing-nothing one scores 0.
import { test } from "node:test";
import assert from "node:assert/strict";
import "../../src/rewards/verifiers.ts";
import { getVerifier } from "../../src/rewards/registry.ts";
import { sandboxSupport } from "../../src/rewards/code/probe.ts";
import { parseCodeJson } from "../../src/rewards/code/forms.ts";

const hasPython = sandboxSupport().python !== null;
const fence = (code: string) => "Here is my solution.\n```python\n" + code + "```\n";

/** One dataset row and responses that must score 1 (correct) or 0 (the rest). */
interface Row {
  name: string;
  row: Record<string, unknown>;
  correct: string[];
  wrong: string[];
}

const ROWS: Row[] = [
  {
    name: "MBPP (test_list, test_setup_code, challenge_test_list)",
    row: {
      task_id: 9001,
      text: "Write a function to return the sum of the squares of the odd numbers in a list.",
      code: "def odd_square_sum(xs):\n    return sum(x * x for x in xs if x % 2)\n",
      test_list: ["assert odd_square_sum([1, 2, 3]) == 10", "assert odd_square_sum([]) == 0", "assert odd_square_sum([2, 4]) == 0"],
      test_setup_code: "LIMIT = 10 ** 6",
      challenge_test_list: ["assert odd_square_sum(list(range(LIMIT // 10 ** 5))) == 165"],
    },
    correct: [fence("def odd_square_sum(xs):\n    return sum(x * x for x in xs if x % 2)\n")],
    wrong: [fence("def odd_square_sum(xs):\n    return sum(x * x for x in xs)\n"), "", fence("def odd_square_sum(xs):\n    print(0)\n")],
  },
  {
    name: "MBPP with a builtin-named target (pow) — the solution's pow is called",
    row: { task_id: 9002, text: "Write a function pow(a, b) for non-negative integer b by repeated squaring.", test_list: ["assert pow(2, 10) == 1024", "assert pow(3, 0) == 1", "assert pow(5, 3) == 125"], test_setup_code: "", challenge_test_list: [] },
    correct: [fence("def pow(a, b):\n    r = 1\n    while b:\n        if b & 1:\n            r *= a\n        a *= a\n        b >>= 1\n    return r\n")],
    wrong: ["", fence("def pow(a, b):\n    return a * b\n"), fence("def power(a, b):\n    return a ** b\n")],
  },
  {
    name: "HumanEval (prompt, test with check(candidate), entry_point)",
    row: {
      task_id: "RlvrEval/0",
      prompt: 'from typing import List\n\n\ndef running_max(xs: List[int]) -> List[int]:\n    """The largest element seen so far at each position.\n    >>> running_max([1, 3, 2])\n    [1, 3, 3]\n    """\n',
      canonical_solution: "    out = []\n    for x in xs:\n        out.append(x if not out else max(out[-1], x))\n    return out\n",
      test: "\n\nMETADATA = {\n    'author': 'rlvr',\n    'dataset': 'test'\n}\n\n\ndef check(candidate):\n    assert candidate([1, 3, 2]) == [1, 3, 3]\n    assert candidate([]) == []\n    assert candidate([-5, -7, -1]) == [-5, -5, -1]\n    assert True\n",
      entry_point: "running_max",
    },
    correct: [
      "    out = []\n    for x in xs:\n        out.append(x if not out else max(out[-1], x))\n    return out\n",
      fence("def running_max(xs: List[int]) -> List[int]:\n    import itertools\n    return list(itertools.accumulate(xs, max))\n"),
    ],
    wrong: ["", "    return xs\n", fence("def running_max(xs):\n    print(xs)\n"), "    pass\n"],
  },
  {
    name: "HumanEval with a helper in the prompt (the response's own def follows the prompt)",
    row: {
      task_id: "RlvrEval/1",
      prompt: 'def shift(s: str, k: int) -> str:\n    return "".join(chr((ord(c) - 97 + k) % 26 + 97) for c in s)\n\n\ndef unshift(s: str) -> str:\n    """Undo shift(s, 3)."""\n',
      test: "\n\nMETADATA = {}\n\n\ndef check(candidate):\n    assert candidate('def') == 'abc'\n    assert candidate(shift('hello', 3)) == 'hello'\n",
      entry_point: "unshift",
    },
    correct: [fence("def unshift(s: str) -> str:\n    return shift(s, -3)\n"), "    return shift(s, 23)\n"],
    wrong: ["", fence("def unshift(s):\n    return s\n")],
  },
  {
    name: "APPS stdin/stdout (input_output as JSON text)",
    row: {
      problem_id: 90001,
      question: "Given n and n integers, print their sum.",
      solutions: "[]",
      input_output: JSON.stringify({ inputs: ["3\n1 2 3\n", "1\n-4\n"], outputs: ["6\n", "-4\n"] }),
      difficulty: "introductory",
      url: "https://example.invalid/p",
      starter_code: "",
    },
    correct: [fence("n = int(input())\nprint(sum(map(int, input().split())))\n")],
    wrong: ["", fence("pass\n"), fence("print(6)\n")],
  },
  {
    name: "APPS call-based (fn_name; outputs wrapped in a list; exact big integers)",
    row: {
      problem_id: 90002,
      input_output: '{"fn_name": "factorial_plus", "inputs": [[25, 0], [3, 1]], "outputs": [[15511210043330985984000000], [7]]}',
      starter_code: "def factorial_plus(n, k):\n\t",
    },
    correct: [fence("import math\ndef factorial_plus(n, k):\n    return math.factorial(n) + k\n"), fence("class Solution:\n    def factorial_plus(self, n, k):\n        r = 1\n        for i in range(2, n + 1):\n            r *= i\n        return r + k\n")],
    wrong: ["", fence("import math\ndef factorial_plus(n, k):\n    return math.factorial(n) + k + (10 ** 9 if n > 20 else 0)\n"), fence("import math\ndef factorial_plus(n, k):\n    return float(math.factorial(n) + k)\n")],
  },
  {
    name: "TACO (format: taco; outputs as lists of lines)",
    row: { format: "taco", question: "Print n, then n doubled, on two lines.", input_output: { inputs: ["4\n"], outputs: [["4", "8"]] }, source: "rlvr" },
    correct: [fence("n = int(input())\nprint(n)\nprint(2 * n)\n")],
    wrong: ["", fence("n = int(input())\nprint(n)\n")],
  },
  {
    name: "CodeContests (public_tests, private_tests, generated_tests)",
    row: {
      name: "rlvr_cc_1",
      description: "Print the maximum of two integers.",
      public_tests: { input: ["1 2\n"], output: ["2\n"] },
      private_tests: { input: ["-1 -5\n"], output: ["-1\n"] },
      generated_tests: { input: ["7 7\n"], output: ["7\n"] },
      difficulty: 7,
    },
    correct: [fence("a, b = map(int, input().split())\nprint(max(a, b))\n")],
    wrong: ["", fence("a, b = map(int, input().split())\nprint(b)\n")],
  },
  {
    name: "LiveCodeBench stdin (private tests base64+zlib+pickle as released)",
    row: {
      question_title: "Add",
      question_content: "Read two integers on two lines; print their sum.",
      platform: "atcoder",
      question_id: "rlvr001",
      contest_id: "rlvr",
      contest_date: "2026-01-01T00:00:00",
      starter_code: "",
      difficulty: "easy",
      public_test_cases: JSON.stringify([{ input: "1\n2\n", output: "3\n", testtype: "stdin" }]),
      private_test_cases: "eJxrYJlawwABPRXR1UqZeQWlJUpWCkrGMXkmMXlKOgpK+aUlUDFziEBJanFJSWVBKkiouCQlM0+pVkcBSauhQUyerhG6ZgucmmOn6AEAP1IoKA==",
      metadata: "{}",
    },
    correct: [fence("print(int(input()) + int(input()))\n")],
    wrong: ["", fence("print(3)\n")],
  },
  {
    name: "LiveCodeBench functional (metadata.func_name, class Solution)",
    row: {
      question_title: "Add to all",
      platform: "leetcode",
      question_id: "rlvr002",
      starter_code: "class Solution:\n    def addToAll(self, nums: List[int], k: int) -> List[int]:\n        ",
      public_test_cases: JSON.stringify([{ input: "[1, 2, 3]\n2", output: "[3, 4, 5]", testtype: "functional" }]),
      private_test_cases: "eJxrYJkawAABPT7R1UqZeQWlJUpWCkrRhjoKRjoKxrExeUZKOgpK+aUlMBljHQUTHQXTWJBwSWpxSUllQSpIIq00L7kkMz8vMUepNnaKHgAfvRlW",
      metadata: JSON.stringify({ func_name: "addToAll" }),
    },
    correct: [fence("from typing import List\nclass Solution:\n    def addToAll(self, nums: List[int], k: int) -> List[int]:\n        return [x + k for x in nums]\n")],
    wrong: ["", fence("class Solution:\n    def addToAll(self, nums, k):\n        return nums\n"), fence("class Solution:\n    def addToAll(self, nums, k):\n        print([x + k for x in nums])\n")],
  },
];

test("every format's row passes the code verifier's example schema (load time)", () => {
  const schema = getVerifier("code").exampleSchema!;
  for (const r of ROWS) {
    const got = schema.safeParse({ id: "x", prompt: "", answer: "", task: "code", meta: r.row });
    assert.equal(got.success, true, `${r.name}: ${got.error?.issues[0]?.message}`);
  }
  const broken = schema.safeParse({ id: "x", prompt: "", answer: "", task: "code", meta: { ...ROWS[0]!.row, test_list: ["odd_square_sum([1]) == 1"] } });
  assert.match(broken.error!.issues[0]!.message, /^test_list\[0\]: expected an "assert …" string/);
});

test("each public dataset format: correct solutions 1; wrong, empty and printing-nothing ones 0", { skip: !hasPython, timeout: 240_000 }, async () => {
  const v = getVerifier("code");
  const jobs = ROWS.flatMap((r) => [...r.correct.map((s) => [r, s, 1] as const), ...r.wrong.map((s) => [r, s, 0] as const)]);
  const got = await Promise.all(jobs.map(([r, s]) => v.verify(s, { id: r.name, prompt: "", answer: "", task: "code", meta: r.row }, { options: { scoring: "all", timeoutMs: 20_000, challengeTests: true } })));
  const wrong = jobs.flatMap(([r, s, want], i) => (got[i]!.reward === want ? [] : [`${r.name} / ${JSON.stringify(s.slice(0, 60))}: reward ${got[i]!.reward}, want ${want}: ${got[i]!.reason}`]));
  assert.deepEqual(wrong, []);
});

test("rlvr verify code reads the published rows as they are (big integers exact)", { skip: !hasPython, timeout: 120_000 }, async () => {
  const { verifyRow } = await import("../../src/cli/commands/verify.ts");
  const apps = ROWS.find((r) => r.name.startsWith("APPS call-based"))!;
  const line = JSON.stringify({ response: apps.correct[0], ...apps.row });
  const ok = await verifyRow("code", parseCodeJson(line) as Record<string, unknown>);
  assert.equal(ok.reward, 1, ok.reason);
  const rlvr = '{"response": "def fact(n):\\n    import math\\n    return math.factorial(n) + 10 ** 9\\n", "tests": [{"call": "fact(25)", "expected": 15511210043330985984000000}]}';
  const bad = await verifyRow("code", parseCodeJson(rlvr) as Record<string, unknown>);
  assert.equal(bad.reward, 0, "fact(25) + 10**9 is not fact(25)");
  await assert.rejects(verifyRow("code", { response: "print(3)", tests: ["assert add(1, 2) == 3"] }), /tests\[0\]: a string is not a test form/);
});
