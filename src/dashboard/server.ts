/**
 * The dashboard's HTTP server (node:http, 127.0.0.1 only): serves the built page and a small
 * read-only JSON API over run directories. JSONL files are read incrementally from a byte
 * offset, so the page polls only what was appended since its last request.
 *
 * API (every id is a run's index in the order given):
 *   GET /api/runs                           → { runs: [{id, name, dir}], poll }
 *   GET /api/runs/:id/jsonl/:file?from=N     → { records, offset, reset, bad, more } (file: metrics, samples, eval)
 *   GET /api/runs/:id/text/:file             → text of config.yaml or report.md ("" when absent)
 * With `mount` (rlvr play --model): GET <prefix>index.json → { label, files: [{name, bytes}] }, GET <prefix><file> → its bytes.
 */
import { closeSync, createReadStream, existsSync, fstatSync, openSync, readdirSync, readSync, readFileSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { basename, dirname, extname, join, resolve, sep } from "node:path";

/** One run shown by the dashboard. */
export interface RunEntry {
  id: number;
  /** Short unique name (the directory's name, with its parent when names clash). */
  name: string;
  dir: string;
}

const JSONL = { metrics: "metrics.jsonl", samples: "samples.jsonl", eval: "eval.jsonl" } as const;
const TEXT = { config: "config.yaml", report: "report.md" } as const;
/** Most bytes of a JSONL file returned per request (the page asks again from the new offset). */
export const MAX_CHUNK = 4 << 20;

function isRunDir(dir: string): boolean {
  return ["metrics.jsonl", "config.yaml", "eval.jsonl"].some((f) => existsSync(join(dir, f)));
}

/**
 * The runs to show: each path that is a run directory, or else each run directory directly
 * inside it (so `rlvr dashboard runs/` shows every run there).
 * @throws Error naming a path that does not exist or holds no run.
 */
export function findRuns(paths: readonly string[]): RunEntry[] {
  const dirs: string[] = [];
  for (const p of paths) {
    const abs = resolve(p);
    if (!existsSync(abs) || !statSync(abs).isDirectory()) throw new Error(`dashboard: ${p} is not a directory`);
    if (isRunDir(abs)) {
      dirs.push(abs);
      continue;
    }
    const inner = readdirSync(abs)
      .sort()
      .map((e) => join(abs, e))
      .filter((d) => statSync(d).isDirectory() && isRunDir(d));
    if (inner.length === 0) throw new Error(`dashboard: ${p} is not a run directory (no metrics.jsonl, config.yaml or eval.jsonl) and holds none`);
    dirs.push(...inner);
  }
  const unique = [...new Set(dirs)];
  const names = unique.map((d) => basename(d));
  return unique.map((dir, id) => {
    const clash = names.filter((n) => n === names[id]).length > 1;
    return { id, dir, name: clash ? `${basename(dirname(dir))}/${names[id]}` : names[id]! };
  });
}

/** Result of reading a JSONL file from a byte offset. */
export interface JsonlChunk {
  records: unknown[];
  /** Offset to ask from next time (just past the last complete line read). */
  offset: number;
  /** True when the file is shorter than `from` (rewritten): records start from its beginning. */
  reset: boolean;
  /** Lines that were not valid JSON (skipped). */
  bad: number;
  /** More complete data follows `offset` (the chunk was capped at MAX_CHUNK): ask again at once. */
  more: boolean;
}

/**
 * Read complete lines of a JSONL file from byte offset `from` (at most MAX_CHUNK bytes; a partly
 * written last line is left for the next call). A missing file reads as empty.
 */
export function readJsonlFrom(path: string, from: number): JsonlChunk {
  if (!existsSync(path)) return { records: [], offset: 0, reset: from > 0, bad: 0, more: false };
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    let reset = false;
    if (!(from >= 0) || from > size) {
      from = 0;
      reset = true;
    }
    const len = Math.min(size - from, MAX_CHUNK);
    const buf = Buffer.alloc(len);
    let got = 0;
    while (got < len) {
      const n = readSync(fd, buf, got, len - got, from + got);
      if (n === 0) break;
      got += n;
    }
    const end = buf.lastIndexOf(0x0a, got - 1);
    if (end < 0) {
      // No complete line yet; a single line longer than MAX_CHUNK is skipped whole.
      if (got === MAX_CHUNK) return { records: [], offset: from + got, reset, bad: 1, more: from + got < size };
      return { records: [], offset: from, reset, bad: 0, more: false };
    }
    const records: unknown[] = [];
    let bad = 0;
    for (const line of buf.subarray(0, end).toString("utf8").split("\n")) {
      const s = line.trim();
      if (!s) continue;
      try {
        records.push(JSON.parse(s));
      } catch {
        bad++;
      }
    }
    return { records, offset: from + end + 1, reset, bad, more: from + got < size };
  } finally {
    closeSync(fd);
  }
}

const MIME: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json",
  ".ico": "image/x-icon",
  ".png": "image/png",
};

function send(res: ServerResponse, status: number, body: string | Buffer, type = "application/json"): void {
  res.writeHead(status, { "content-type": type, "cache-control": "no-store", "x-content-type-options": "nosniff" });
  res.end(body);
}

/** Files of one directory served read-only under a URL prefix (`rlvr play --model`: the model's files). */
export interface MountedFiles {
  /** URL path prefix, e.g. "/model/". */
  prefix: string;
  dir: string;
  /** The file names served (others under the prefix are 404). */
  files: readonly string[];
  /** What the files are (e.g. the model's catalogue name), listed with them at `prefix + "index.json"`. */
  label: string;
}

/** Serve `prefix + name` for a mounted file (streamed, with its length); @returns false when `path` is not under the prefix. */
function serveMounted(path: string, res: ServerResponse, m: MountedFiles): boolean {
  if (!path.startsWith(m.prefix)) return false;
  const name = path.slice(m.prefix.length);
  if (name === "index.json") {
    send(res, 200, JSON.stringify({ label: m.label, files: m.files.map((f) => ({ name: f, bytes: statSync(join(m.dir, f)).size })) }));
    return true;
  }
  if (!m.files.includes(name)) {
    send(res, 404, JSON.stringify({ error: `no file "${name}" (served: ${m.files.join(", ")})` }));
    return true;
  }
  const file = join(m.dir, name);
  res.writeHead(200, { "content-type": MIME[extname(file)] ?? "application/octet-stream", "content-length": statSync(file).size, "cache-control": "no-store", "x-content-type-options": "nosniff" });
  createReadStream(file).pipe(res);
  return true;
}

function handle(req: IncomingMessage, res: ServerResponse, runs: RunEntry[], staticDir: string, poll: number, mount?: MountedFiles): void {
  const url = new URL(req.url ?? "/", "http://localhost");
  const path = decodeURIComponent(url.pathname);
  if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, JSON.stringify({ error: "read-only" }));
  if (mount && serveMounted(path, res, mount)) return;
  if (path === "/api/runs") return send(res, 200, JSON.stringify({ runs, poll }));
  const m = /^\/api\/runs\/(\d+)\/(jsonl|text)\/([a-z]+)$/.exec(path);
  if (m) {
    const run = runs[Number(m[1])];
    if (!run) return send(res, 404, JSON.stringify({ error: `no run ${m[1]}` }));
    if (m[2] === "jsonl") {
      const file = JSONL[m[3] as keyof typeof JSONL];
      if (!file) return send(res, 404, JSON.stringify({ error: `no jsonl file "${m[3]}"` }));
      const from = Number(url.searchParams.get("from") ?? 0);
      return send(res, 200, JSON.stringify(readJsonlFrom(join(run.dir, file), from)));
    }
    const file = TEXT[m[3] as keyof typeof TEXT];
    if (!file) return send(res, 404, JSON.stringify({ error: `no text file "${m[3]}"` }));
    const p = join(run.dir, file);
    return send(res, 200, existsSync(p) ? readFileSync(p) : "", "text/plain; charset=utf-8");
  }
  if (path.startsWith("/api/")) return send(res, 404, JSON.stringify({ error: "unknown API path" }));
  // Static files of the built page; anything else is the page itself.
  const root = resolve(staticDir);
  let file = resolve(root, "." + (path === "/" ? "/index.html" : path));
  if (!(file === root || file.startsWith(root + sep)) || !existsSync(file) || !statSync(file).isFile()) file = join(root, "index.html");
  send(res, 200, readFileSync(file), MIME[extname(file)] ?? "application/octet-stream");
}

export interface DashboardServer {
  server: Server;
  url: string;
  runs: RunEntry[];
  close(): Promise<void>;
}

/**
 * Serve the dashboard for `runs` on 127.0.0.1.
 * @param o.port 0 (default) picks a free port
 * @param o.poll page polling interval, ms (default 2000)
 * @param o.headers sent with every response (the training page's cross-origin isolation, src/cli/commands/play.ts)
 * @param o.mount a directory's listed files served read-only under a prefix (`rlvr play --model`)
 */
export async function startDashboardServer(runs: RunEntry[], staticDir: string, o: { port?: number; poll?: number; headers?: Record<string, string>; mount?: MountedFiles } = {}): Promise<DashboardServer> {
  const poll = o.poll ?? 2000;
  const server = createServer((req, res) => {
    for (const [k, v] of Object.entries(o.headers ?? {})) res.setHeader(k, v);
    try {
      handle(req, res, runs, staticDir, poll, o.mount);
    } catch (e) {
      send(res, 500, JSON.stringify({ error: (e as Error).message }));
    }
  });
  await new Promise<void>((ok, fail) => {
    server.once("error", fail);
    server.listen(o.port ?? 0, "127.0.0.1", () => ok());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}/`,
    runs,
    close: () => new Promise<void>((ok) => {
      server.closeAllConnections();
      server.close(() => ok());
    }),
  };
}
