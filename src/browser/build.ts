/**
 * Builds the training page (dashboard/train/: index.html, main.ts) with the dashboard's tooling
 * (Vite, src/dashboard/build.ts) into dashboard/train/dist. The page bundles rlvr's own src/ —
 * the trainer, the pipeline, the tasks, the verifiers and the embedded engine, unchanged — so
 * the build answers their imports of Node built-ins (node:fs, node:worker_threads, …) with stubs:
 * every function of such a module throws "… is not available in a browser" when called, which
 * the page's code path never does (it keeps no run directory and starts no worker thread).
 *
 *   node --import tsx src/browser/build.ts     # build now (prints the output directory)
 */
import { createHash } from "node:crypto";
import { builtinModules } from "node:module";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { DASHBOARD_ROOT, ensureDashboardBuilt, type PageSpec } from "../dashboard/build.ts";

/** The page's folder (dashboard/train) and rlvr's sources it bundles (absent from an installed package). */
export const PLAY_ROOT = join(DASHBOARD_ROOT, "train");
const SRC_ROOT = join(DASHBOARD_ROOT, "..", "src");
/** Version of the Vite settings below: bump it when they change. */
const BUILD_SETTINGS = "play: node stubs v6";
const STUB_PREFIX = "\0rlvr-node-stub:";
/**
 * Functions that rlvr's modules call while they load (not on the page's paths): calling their stub
 * returns another stub instead of throwing, so the module loads and fails only if it is used.
 */
const CALLED_AT_LOAD = new Set(["module.createRequire", "util.promisify", "util.debuglog", "path.resolve", "path.join", "path.dirname", "url.fileURLToPath"]);
/** Functions that modules call while they load and that have a true answer in a browser. */
const BROWSER_VALUES: Record<string, string> = {
  "os.endianness": `() => (new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? "LE" : "BE")`,
  "os.availableParallelism": `() => navigator.hardwareConcurrency || 1`,
  // The run's memory check (src/config/memory.ts): the device's memory (Chrome rounds it, ≤ 8 GiB) and the JS heap's limit.
  "os.totalmem": `() => (navigator.deviceMemory || 8) * 2 ** 30`,
  "v8.getHeapStatistics": `() => ({ heap_size_limit: performance.memory?.jsHeapSizeLimit || 4 * 2 ** 30 })`,
};

function files(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir).sort()) {
    const p = join(dir, e);
    if (e === "dist" || e === "node_modules") continue;
    if (statSync(p).isDirectory()) files(p, out);
    else out.push(p);
  }
  return out;
}

/**
 * Hash of what the page is built from: dashboard/train, dashboard/src (charts, styles) and src/.
 * In an installed package (no src/), the shipped build's own stamp: it is used as it is.
 */
export function playSourceHash(): string {
  if (!existsSync(SRC_ROOT)) {
    try {
      return readFileSync(join(PLAY_ROOT, "dist", ".source-hash"), "utf8");
    } catch {
      return "no-sources";
    }
  }
  const h = createHash("sha256").update(BUILD_SETTINGS).update("\0");
  for (const f of [...files(PLAY_ROOT), ...files(join(DASHBOARD_ROOT, "src")), ...files(SRC_ROOT)]) {
    h.update(relative(DASHBOARD_ROOT, f)).update("\0").update(readFileSync(f)).update("\0");
  }
  return h.digest("hex").slice(0, 16);
}

/** Packages of Node's terminal that the page's modules import but never use there (the CLI's progress bars). */
const TERMINAL_PACKAGES = ["cli-progress"];

/** The module to stub when `id` names a Node built-in ("node:fs/promises" → "node:fs/promises") or a terminal package. */
function stubbedName(id: string): string | null {
  const bare = id.startsWith("node:") ? id.slice(5) : id;
  if (builtinModules.includes(bare)) return `node:${bare}`;
  return TERMINAL_PACKAGES.includes(id) ? id : null;
}

/**
 * The stub module of `name` (a Node built-in "node:…" or a package): the same export names as in
 * Node (read from the real module), functions and objects that throw when used, plain values
 * (path.sep, os.EOL) as they are.
 */
export async function nodeStubSource(name: string): Promise<string> {
  const real = (await import(name)) as Record<string, unknown>;
  const short = name.replace(/^node:/, "");
  const lines = [
    `const fail = (what) => { throw new Error(what + " is not available in a browser (rlvr's page stubs Node built-ins)"); };`,
    `const stub = (what, lazy) => new Proxy(function () {}, { get: (_, k) => (k === "then" || typeof k === "symbol" ? undefined : stub(what + "." + String(k))), apply: () => (lazy ? stub(what + "()") : fail(what)), construct: () => fail(what) });`,
  ];
  for (const [k, v] of Object.entries(real)) {
    if (k === "default" || !/^[A-Za-z_$][\w$]*$/.test(k)) continue;
    const value =
      BROWSER_VALUES[`${short}.${k}`] ??
      (["string", "number", "boolean"].includes(typeof v) ? JSON.stringify(v) : `stub(${JSON.stringify(`${name}.${k}`)}, ${CALLED_AT_LOAD.has(`${short}.${k}`)})`);
    lines.push(`export const ${k} = ${value};`);
  }
  lines.push(`export default stub(${JSON.stringify(name)});`);
  return lines.join("\n");
}

/** Vite plugin: every import of a Node built-in (or a terminal package) resolves to its stub module (nodeStubSource). */
export function nodeBuiltinStubs(): import("vite").Plugin {
  return {
    name: "rlvr-node-builtin-stubs",
    enforce: "pre",
    resolveId(id) {
      const name = stubbedName(id);
      return name ? STUB_PREFIX + name : null;
    },
    async load(id) {
      return id.startsWith(STUB_PREFIX) ? nodeStubSource(id.slice(STUB_PREFIX.length)) : null;
    },
  };
}

/** The training page for ensureDashboardBuilt (src/dashboard/build.ts). */
export const PLAY_PAGE: PageSpec = {
  name: "play",
  root: PLAY_ROOT,
  hash: playSourceHash,
  vite: async () => ({
    plugins: [nodeBuiltinStubs()],
    build: {
      target: "es2022",
      chunkSizeWarningLimit: 8192,
      minify: process.env.RLVR_PLAY_DEBUG !== "1",
      rollupOptions: {
        // The Node side imports some modules both ways (lazily elsewhere); in one page bundle that is expected.
        onLog(level, log, handler) {
          if (log.code !== "INEFFECTIVE_DYNAMIC_IMPORT") handler(level, log);
        },
      },
    },
  }),
};

/** Make sure the training page is built (dashboard/train/dist); @returns its directory. */
export function ensurePlayPageBuilt(o: { log?: (msg: string) => void } = {}): Promise<string> {
  return ensureDashboardBuilt(o, PLAY_PAGE);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(await ensurePlayPageBuilt({ log: (m) => console.error(m) }));
}
