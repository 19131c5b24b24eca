/**
 * Tool calls in the OpenAI format, parsed from the model's text by the Hermes/Qwen convention:
 * each call is `<tool_call>{"name": "...", "arguments": {...}}</tool_call>` in the response (the
 * layout Qwen2.5/Qwen3 chat templates teach, and vLLM's `hermes` tool parser reads).
 *
 * Going in, an assistant message's `tool_calls` are written back into its content in the same
 * convention, so a multi-turn conversation re-renders exactly the tokens the model produced.
 * A tokenizer without a chat template gets the tools as a system message (plainToolsPrompt).
 */
import { randomBytes } from "node:crypto";
import type { Tool } from "./schemas.ts";

/** One parsed call, OpenAI shape (`arguments` is a JSON string). */
export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

const BLOCK = /<tool_call>([\s\S]*?)<\/tool_call>/g;

/**
 * Split a response into text and tool calls. A block whose body is not a JSON object with a
 * string `name` stays in the text (the model made a malformed call; the client sees it as-is).
 * `arguments` may be an object (serialised) or a JSON string (kept).
 * @returns content: the text outside the parsed blocks, trimmed (null when empty and a call was
 *   parsed); calls: in order of appearance.
 */
export function parseToolCalls(text: string): { content: string | null; calls: ToolCall[] } {
  const calls: ToolCall[] = [];
  const rest = text.replace(BLOCK, (whole, body: string) => {
    let v: unknown;
    try {
      v = JSON.parse(body.trim());
    } catch {
      return whole;
    }
    if (!v || typeof v !== "object" || Array.isArray(v) || typeof (v as { name?: unknown }).name !== "string") return whole;
    const o = v as { name: string; arguments?: unknown; parameters?: unknown };
    const args = o.arguments ?? o.parameters ?? {};
    calls.push({ id: `call_${randomBytes(8).toString("hex")}`, type: "function", function: { name: o.name, arguments: typeof args === "string" ? args : JSON.stringify(args) } });
    return "";
  });
  const content = rest.trim();
  return { content: calls.length > 0 && content === "" ? null : calls.length > 0 ? content : text, calls };
}

/** The text form of an assistant turn's tool calls (the inverse of parseToolCalls). */
export function renderToolCalls(calls: { function: { name: string; arguments: string } }[]): string {
  return calls
    .map((c) => {
      let args: unknown = c.function.arguments;
      try {
        args = JSON.parse(c.function.arguments);
      } catch {
        // keep the string as the model wrote it
      }
      return `<tool_call>${JSON.stringify({ name: c.function.name, arguments: args })}</tool_call>`;
    })
    .join("\n");
}

/** A system message listing `tools` and the call convention, for tokenizers without a chat template. */
export function plainToolsPrompt(tools: Tool[]): string {
  const sigs = tools.map((t) => JSON.stringify({ name: t.function.name, description: t.function.description ?? "", parameters: t.function.parameters ?? {} }));
  return `You may call these tools:\n${sigs.join("\n")}\nTo call one, answer <tool_call>{"name": <tool name>, "arguments": <JSON object>}</tool_call>.`;
}
