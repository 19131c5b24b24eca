/**
 * A `process` global for rlvr's modules in a browser tab (imported first by the training page):
 * a few of them read `process.env`, `process.cwd()` or write to `process.stderr` on paths the
 * page takes. Nothing is defined where `process` exists (Node). No imports, so that it is
 * evaluated before every other module of the page.
 */
const g = globalThis as unknown as { process?: unknown };
if (g.process === undefined) {
  const stream = { write: (s: unknown) => (console.info(String(s).trimEnd()), true), isTTY: false };
  g.process = {
    env: {},
    argv: [],
    versions: {},
    features: {},
    platform: "browser",
    pid: 0,
    cwd: () => "/",
    stderr: stream,
    stdout: stream,
    on: () => undefined,
    once: () => undefined,
    off: () => undefined,
    emitWarning: () => undefined,
    nextTick: (f: (...a: unknown[]) => void, ...a: unknown[]) => queueMicrotask(() => f(...a)),
  };
}
export {};
