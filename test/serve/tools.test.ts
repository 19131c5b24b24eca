// The <tool_call> parser and its inverse (tiny models never emit calls, so the parser is tested here).
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { parseToolCalls, renderToolCalls } from "../../src/serve/tools.ts";

test("parseToolCalls: Hermes/Qwen blocks become OpenAI tool calls; the rest stays content", () => {
  const r = parseToolCalls('Let me compute.\n<tool_call>\n{"name": "calc", "arguments": {"expr": "2+3"}}\n</tool_call>');
  assert.equal(r.content, "Let me compute.");
  assert.equal(r.calls.length, 1);
  assert.equal(r.calls[0]!.type, "function");
  assert.equal(r.calls[0]!.function.name, "calc");
  assert.deepEqual(JSON.parse(r.calls[0]!.function.arguments), { expr: "2+3" });
  assert.match(r.calls[0]!.id, /^call_[0-9a-f]{16}$/);
  // Two calls, no text: content is null; string arguments are kept as written.
  const two = parseToolCalls('<tool_call>{"name":"a","arguments":"{\\"x\\":1}"}</tool_call><tool_call>{"name":"b"}</tool_call>');
  assert.equal(two.content, null);
  assert.deepEqual(two.calls.map((c) => [c.function.name, c.function.arguments]), [["a", '{"x":1}'], ["b", "{}"]]);
});

test("parseToolCalls: malformed blocks are left in the content, never thrown", () => {
  for (const bad of ["<tool_call>{not json}</tool_call>", '<tool_call>{"arguments": {}}</tool_call>', "<tool_call>[1,2]</tool_call>", "<tool_call>{\"name\": 3}</tool_call>", "<tool_call>unclosed", "plain text"]) {
    const r = parseToolCalls(bad);
    assert.equal(r.calls.length, 0);
    assert.equal(r.content, bad);
  }
  fc.assert(fc.property(fc.string(), (s) => {
    const r = parseToolCalls(s);
    return Array.isArray(r.calls);
  }));
});

test("renderToolCalls then parseToolCalls gives the same names and arguments back", () => {
  fc.assert(
    fc.property(fc.array(fc.record({ name: fc.string({ minLength: 1 }).filter((s) => !s.includes("</tool_call>")), args: fc.dictionary(fc.string().filter((s) => !s.includes("</tool_call>")), fc.integer()) }), { minLength: 1, maxLength: 3 }), (xs) => {
      const calls = xs.map((x) => ({ function: { name: x.name, arguments: JSON.stringify(x.args) } }));
      const back = parseToolCalls(renderToolCalls(calls)).calls;
      assert.deepEqual(back.map((c) => [c.function.name, c.function.arguments]), xs.map((x) => [x.name, JSON.stringify(x.args)]));
    }),
  );
});
