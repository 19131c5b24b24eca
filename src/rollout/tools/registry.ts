/**
 * Tools an agent loop can call, by name. A tool is an async string-to-string function: the text
 * between `<name>` and `</name>` in the model's output goes in, the observation text comes out.
 * Built in: `calc` (exact arithmetic, ./calculator.ts) and `python` / `js` (the sandboxed code
 * runner of the rewards layer, ./code.ts). Register your own with `registerTool`.
 */
import { calculate, CalculatorError } from "./calculator.ts";
import { runCodeTool } from "./code.ts";

/** A tool the model can call as `<name>input</name>`. */
export interface Tool {
  /** Tag name, `[A-Za-z][A-Za-z0-9_-]*` (the call syntax is `<name>input</name>`). */
  name: string;
  /** One line for docs and prompts. */
  description: string;
  /**
   * Run the tool on the call's input text. Return the observation text. Throwing is allowed: the
   * agent loop turns the error into an observation `error: <message>` (the trajectory goes on).
   */
  run(input: string): Promise<string> | string;
  /** Wall-clock limit in ms enforced by the agent loop (default 10,000); past it the observation is `error: timeout`. */
  timeoutMs?: number;
}

const NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;

/** A set of tools by name. */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();

  /** @throws when the name is not a valid tag name or is already registered (pass `replace` to override). */
  register(tool: Tool, opts: { replace?: boolean } = {}): this {
    if (!NAME.test(tool.name)) throw new Error(`tool name ${JSON.stringify(tool.name)} must match ${NAME} (it is used as the tag <${tool.name}>…</${tool.name}>)`);
    if (this.tools.has(tool.name) && !opts.replace) throw new Error(`tool ${JSON.stringify(tool.name)} is already registered (pass {replace: true} to override it)`);
    this.tools.set(tool.name, tool);
    return this;
  }
  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }
  has(name: string): boolean {
    return this.tools.has(name);
  }
  names(): string[] {
    return [...this.tools.keys()];
  }
  /** A registry holding only `names`. @throws naming an unknown tool and the known ones. */
  pick(names: readonly string[]): ToolRegistry {
    const r = new ToolRegistry();
    for (const n of names) {
      const t = this.tools.get(n);
      if (!t) throw new Error(`unknown tool ${JSON.stringify(n)}; registered tools: ${this.names().join(", ") || "(none)"}`);
      r.register(t);
    }
    return r;
  }
}

/** The calculator tool: `<calc>12*7-30</calc>` → `54`. */
export const calculatorTool: Tool = {
  name: "calc",
  description: "exact arithmetic: + - * / % ^ and parentheses on integers and decimals",
  run(input: string): string {
    try {
      return calculate(input);
    } catch (e) {
      if (e instanceof CalculatorError) throw e;
      throw new CalculatorError(String(e));
    }
  },
  timeoutMs: 1000,
};

/** The process-wide registry that configs name tools from (calc, python, js built in). */
export const defaultTools = new ToolRegistry()
  .register(calculatorTool)
  .register({ name: "python", description: "run a Python program in the sandbox; the observation is its stdout (or the error)", run: (s) => runCodeTool(s, "python"), timeoutMs: 15_000 })
  .register({ name: "js", description: "run a JavaScript program in the sandbox; the observation is its stdout (or the error)", run: (s) => runCodeTool(s, "javascript"), timeoutMs: 15_000 });

/** Register a user tool in the process-wide registry (then name it in rl.agent.tools). */
export function registerTool(tool: Tool, opts: { replace?: boolean } = {}): void {
  defaultTools.register(tool, opts);
}
