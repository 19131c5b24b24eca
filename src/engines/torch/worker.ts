/**
 * Spawning and supervising the torch engine's Python worker (`python -m rlvr_worker`).
 *
 * - Finds Python: an explicit path, then $RLVR_PYTHON, then the virtual environment that
 *   `rlvr setup torch` creates (python/.venv), then `python3` on PATH.
 * - Runs the worker from this checkout's python/ folder (PYTHONPATH), so the client and the
 *   worker always come from the same version of rlvr.
 * - One request at a time, in order; replies are matched by id.
 * - Forwards the worker's stderr line by line (and keeps the last lines for error messages).
 * - When the worker dies, every pending and later call fails with one line (a PeerError naming
 *   the call and the exit status); the model state it held is gone, so nothing is retried silently.
 * - Every call has a deadline (`deadline(op)`): past it the worker's process group is killed and
 *   the call fails with a PeerError naming the call, the seconds and the config field.
 * - The worker runs in its own process group (src/util/peer.ts): when it exits, anything it
 *   started (colocated vLLM's engine core and resource tracker, torchrun's ranks) is killed too.
 */
import { spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { decodePayload, encodeFrame, FrameReader, type Header, type WireTensors } from "./protocol.ts";
import { killGroup, PeerError, spawnGroup } from "../../util/peer.ts";

/** The folder that holds the worker package (python/rlvr_worker). */
export const WORKER_ROOT = resolve(import.meta.dirname, "..", "..", "..", "python");
/** Where `rlvr setup torch` puts its virtual environment. */
export const DEFAULT_VENV = join(WORKER_ROOT, ".venv");

/** The command that installs what the worker needs (shown in every "missing dependency" error). */
export const INSTALL_HINT =
  "run `rlvr setup torch` (creates python/.venv with torch==2.13.0 and transformers), or install them into any Python " +
  "(`pip install torch==2.13.0 transformers safetensors numpy`) and point model.python (or $RLVR_PYTHON) at it";

/** Python executable to use: explicit, $RLVR_PYTHON, python/.venv, then python3. */
export function resolvePython(explicit?: string): string {
  if (explicit) return explicit;
  if (process.env.RLVR_PYTHON) return process.env.RLVR_PYTHON;
  const venv = process.platform === "win32" ? join(DEFAULT_VENV, "Scripts", "python.exe") : join(DEFAULT_VENV, "bin", "python");
  if (existsSync(venv)) return venv;
  return "python3";
}

/** The environment of every worker Python process (PYTHONPATH with the worker, quiet threads). */
export function workerEnv(): NodeJS.ProcessEnv {
  const pp = process.env.PYTHONPATH;
  // OMP_WAIT_POLICY=PASSIVE: idle OpenMP threads sleep instead of spinning; on a busy CPU the
  // spinning default made small CPU forwards ~50× slower (measured with 2 threads on 2 loaded cores).
  return {
    OMP_WAIT_POLICY: "PASSIVE",
    ...process.env,
    PYTHONPATH: pp ? `${WORKER_ROOT}:${pp}` : WORKER_ROOT,
    PYTHONUNBUFFERED: "1",
    TOKENIZERS_PARALLELISM: "false",
  };
}

/**
 * Whether `python` can import torch and transformers (synchronous; for tests and `rlvr setup`).
 * @returns ok with versions, or a reason naming the missing piece and the install command.
 */
export function probeTorch(python?: string): { ok: true; python: string; torch: string; transformers: string } | { ok: false; python: string; reason: string } {
  const py = resolvePython(python);
  const r = spawnSync(py, ["-c", "import torch, transformers, safetensors, numpy; print(torch.__version__, transformers.__version__)"], {
    encoding: "utf8",
    env: workerEnv(),
    timeout: 120_000,
  });
  if (r.error) return { ok: false, python: py, reason: `cannot run ${py} (${r.error.message}); ${INSTALL_HINT}` };
  if (r.status !== 0) {
    const missing = /No module named '([^']+)'/.exec(r.stderr ?? "");
    const what = missing ? `${py} has no module ${missing[1]}` : `${py} failed to import torch/transformers: ${(r.stderr ?? "").trim().split("\n").slice(-1)[0]}`;
    return { ok: false, python: py, reason: `${what}; ${INSTALL_HINT}` };
  }
  const [torch = "?", transformers = "?"] = r.stdout.trim().split(/\s+/);
  return { ok: true, python: py, torch, transformers };
}

export interface WorkerOptions {
  /** Python executable (see resolvePython). */
  python?: string;
  /** Receives each stderr line of the worker; default: written to process.stderr with a prefix. */
  onStderr?: (line: string) => void;
  /** Arguments after the Python executable (default `-u -m rlvr_worker`; torchrun: see launch.ts). */
  args?: string[];
  /** Extra environment variables for the worker. */
  env?: Record<string, string>;
  /** The deadline of each call by op (seconds and the config field that sets it); null = none. */
  deadline?: (op: string) => Deadline | null;
}

/** How long one call may take, and the config field that says so (named in the timeout error). */
export interface Deadline {
  seconds: number;
  field: string;
}

interface Pending {
  id: number;
  op: string;
  resolve: (v: { header: Header; tensors: WireTensors }) => void;
  reject: (e: Error) => void;
}

/** An error the worker reported for one request (the worker is still alive). */
export class WorkerError extends Error {
  constructor(
    message: string,
    readonly op: string,
    readonly pythonTraceback?: string,
  ) {
    super(message);
    this.name = "WorkerError";
  }
}

export class WorkerProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly reader = new FrameReader();
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private exited: string | null = null;
  private stderrTail: string[] = [];
  private stderrPartial = "";
  private queue: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private readonly deadline: (op: string) => Deadline | null;
  readonly python: string;
  /** "torch worker (pid N)": the peer named in errors. */
  readonly peer: string;

  constructor(opts: WorkerOptions = {}) {
    this.python = resolvePython(opts.python);
    this.deadline = opts.deadline ?? (() => null);
    const onLine = opts.onStderr ?? ((line: string) => process.stderr.write(`[torch worker] ${line}\n`));
    this.child = spawnGroup(this.python, opts.args ?? ["-u", "-m", "rlvr_worker"], { env: { ...workerEnv(), ...opts.env }, stdio: ["pipe", "pipe", "pipe"] }) as ChildProcessWithoutNullStreams;
    this.peer = `torch worker (pid ${this.child.pid ?? "?"})`;
    this.child.stdout.on("data", (chunk: Buffer) => {
      let payloads: Buffer[];
      try {
        payloads = this.reader.push(chunk);
      } catch (e) {
        this.fail(`unreadable reply (${(e as Error).message})`);
        return;
      }
      for (const p of payloads) this.onPayload(p);
    });
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (s: string) => {
      const lines = (this.stderrPartial + s).split("\n");
      this.stderrPartial = lines.pop() ?? "";
      for (const line of lines) {
        this.stderrTail.push(line);
        if (this.stderrTail.length > 40) this.stderrTail.shift();
        onLine(line);
      }
    });
    this.child.on("error", (e) => {
      this.fail(`could not start ${this.python} (${e.message}); ${INSTALL_HINT}`);
    });
    this.child.on("exit", (code, signal) => {
      if (this.stderrPartial) this.stderrTail.push(this.stderrPartial);
      this.fail(`exited (${signal ? `signal ${signal}` : `code ${code}`})`);
    });
    this.child.stdin.on("error", () => {
      /* EPIPE when the worker died; reported through 'exit' */
    });
    this.idle();
  }

  /** The worker's process id (the leader of its process group). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the worker process is still running. */
  get alive(): boolean {
    return this.exited === null;
  }

  /** Last lines the worker wrote to stderr. */
  stderr(): string {
    return this.stderrTail.join("\n");
  }

  /** The worker is gone (or must be): every pending call fails with one line naming it. */
  private fail(reason: string, pendingError?: PeerError): void {
    if (this.exited !== null) return;
    this.clearTimer();
    const tail = this.stderrTail.filter((l) => l.trim()).slice(-15);
    const missing = /No module named '([^']+)'/.exec(tail.join("\n"));
    let detail = "";
    if (missing) detail = `: Python has no module ${missing[1]}; ${INSTALL_HINT}`;
    else if (/code [1-9]/.test(reason) && tail.length) detail = `; its last stderr line: ${tail[tail.length - 1]!.trim()}`;
    this.exited = `${this.peer} (${this.python}) ${reason}${detail}`;
    for (const p of this.pending.values()) {
      p.reject(pendingError ?? new PeerError(this.peer, p.op, `failed: the worker ${reason}${detail}`, null, null, "the worker's model state is lost (create a new engine)"));
    }
    this.pending.clear();
    killGroup(this.child.pid);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private onPayload(payload: Buffer): void {
    const msg = decodePayload(payload);
    const id = msg.header.id as number;
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    this.clearTimer();
    if (this.pending.size === 0) this.idle();
    if (msg.header.ok) p.resolve(msg);
    else {
      const tb = typeof msg.header.traceback === "string" ? msg.header.traceback : undefined;
      p.reject(new WorkerError(`torch worker ${p.op} failed: ${String(msg.header.error)}`, p.op, tb));
    }
  }

  /** Let Node exit while nothing is pending (the worker exits on stdin EOF). */
  private idle(): void {
    this.child.unref();
    (this.child.stdout as unknown as { unref?: () => void }).unref?.();
    (this.child.stderr as unknown as { unref?: () => void }).unref?.();
    (this.child.stdin as unknown as { unref?: () => void }).unref?.();
  }

  private busy(): void {
    this.child.ref();
    (this.child.stdout as unknown as { ref?: () => void }).ref?.();
    (this.child.stderr as unknown as { ref?: () => void }).ref?.();
  }

  /**
   * Send one request and wait for its reply; requests run one at a time, in call order.
   * @param deadline this call's deadline (default: the worker's `deadline(op)`); it runs from when the request is sent.
   * @throws PeerError when the deadline passes (the worker is killed) or the worker dies; WorkerError when the worker reports an error.
   */
  call(op: string, header: Header = {}, tensors: WireTensors = {}, shapes: Record<string, number[]> = {}, deadline?: Deadline | null): Promise<{ header: Header; tensors: WireTensors }> {
    const run = () =>
      new Promise<{ header: Header; tensors: WireTensors }>((resolvePromise, reject) => {
        if (this.exited !== null) {
          reject(new Error(`${this.exited}\n(cannot run ${op}; create a new engine)`));
          return;
        }
        const id = this.nextId++;
        let frame: Buffer;
        try {
          frame = encodeFrame({ ...header, id, op }, tensors, shapes);
        } catch (e) {
          reject(e as Error);
          return;
        }
        this.pending.set(id, { id, op, resolve: resolvePromise, reject });
        this.busy();
        const d = op === "shutdown" ? null : deadline !== undefined ? deadline : this.deadline(op);
        if (d) {
          this.timer = setTimeout(() => this.fail(`did not answer ${op} within ${d.seconds} s and was killed`, PeerError.timeout(this.peer, op, d.seconds, d.field)), d.seconds * 1000);
        }
        this.child.stdin.write(frame);
      });
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /** Ask the worker to exit; kills it if it has not exited after `timeoutMs`. */
  async close(timeoutMs = 10_000): Promise<void> {
    if (this.exited !== null) return;
    const exited = new Promise<void>((r) => this.child.once("exit", () => r()));
    this.busy();
    try {
      await Promise.race([this.call("shutdown"), new Promise((r) => setTimeout(r, timeoutMs))]);
    } catch {
      /* already dead */
    }
    this.child.stdin.end();
    this.busy(); // the shutdown reply left the child unref'd; keep Node alive until it exits
    const timer = setTimeout(() => this.child.kill("SIGKILL"), timeoutMs);
    await exited;
    clearTimeout(timer);
  }

  /** Kill the worker immediately (tests; crash simulation). */
  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    this.child.kill(signal);
  }
}
