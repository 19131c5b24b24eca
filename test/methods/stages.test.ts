/**
 * `Method.stages` is enforced: a method whose built hooks include a stage it did not declare is a
 * TypeError naming the method, the hook and the fix; every built-in method keeps to its stages.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { HOOK_STAGES, defineMethod, listMethods } from "../../src/methods/index.ts";

import type { RunContext } from "../../src/pipeline/context.ts";

/** A stand-in for any value a builder reads eagerly: every property and call is itself, every number 1. */
function anything(): never {
  const target = function () {} as unknown as Record<PropertyKey, unknown>;
  const p: unknown = new Proxy(target, {
    get: (_t, k) => (k === Symbol.toPrimitive ? (hint: string) => (hint === "string" ? "x" : 1) : k === Symbol.iterator ? function* () {} : k === "then" ? undefined : p),
    apply: () => p,
    construct: () => p as object,
  });
  return p as never;
}

test("a hook of an undeclared stage is an error naming the method, the hook and the fix", () => {
  const m = defineMethod({ name: "test-undeclared", stages: ["reward"], build: () => ({ rewards: () => undefined, advantages: (a) => a }) });
  assert.throws(() => m.build(anything() as RunContext, {}), { name: "TypeError", message: 'defineMethod("test-undeclared"): its hook "advantages" transforms the advantages stage, which its stages [reward] do not declare; add "advantages" to stages' });
  const typo = defineMethod({ name: "test-typo", stages: ["reward"], build: () => ({ reward: () => undefined }) as never });
  assert.throws(() => typo.build(anything() as RunContext, {}), /defineMethod\("test-typo"\): build returned an unknown hook "reward"; hooks are .*rewards/);
  assert.throws(() => defineMethod({ name: "test-bad-stage", stages: ["rewards" as never], build: () => ({}) }), /defineMethod\("test-bad-stage"\): stages must be a list of init, collect, .*; got "rewards"/);
  const ok = defineMethod({ name: "test-declared", stages: ["reward", "advantages"], build: () => ({ rewards: () => undefined, advantages: (a) => a, close: async () => {} }) });
  assert.deepEqual(Object.keys(ok.build(anything() as RunContext, {})), ["rewards", "advantages", "close"]);
});

test("every built-in method builds hooks within its declared stages", () => {
  const builtins = ["ghpo", "ttrl", "evol", "ear", "relift", "luffy", "chord", "kdrl", "raft", "selfplay"];
  for (const m of listMethods().filter((x) => !x.name.startsWith("test-"))) {
    const hooks = m.build(anything() as RunContext, anything());
    for (const k of Object.keys(hooks)) {
      const st = HOOK_STAGES[k as keyof typeof HOOK_STAGES];
      assert.ok(st === null || m.stages.includes(st), `${m.name}: ${k}`);
    }
  }
  assert.deepEqual(listMethods().map((m) => m.name).filter((n) => !n.startsWith("test-")), builtins);
});
