/**
 * Cross-process calls that fail loudly: a named error for a peer (a vLLM server, the torch worker)
 * that did not answer in time or died, and process groups that go away with their leader.
 *
 * A `PeerError` is one line naming the peer, the call and what happened, e.g.
 *   vLLM server http://127.0.0.1:8123: POST /v1/completions did not answer within 120 s at step 6 (rollout.requestTimeoutS)
 * The peer's client does not know the training step; the trainer adds it (`atStep`).
 */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";

/** A cross-process call that timed out, or whose peer died or could not be reached. */
export class PeerError extends Error {
  override name = "PeerError";
  constructor(
    /** Who did not answer, e.g. "vLLM server http://127.0.0.1:8123", "torch worker (pid 123)". */
    readonly peer: string,
    /** The call, e.g. "POST /v1/completions", "forward". */
    readonly call: string,
    /** What happened, e.g. "did not answer within 120 s", "failed: the process exited (signal SIGKILL)". */
    readonly what: string,
    /** The config field that sets the deadline (timeouts), or null. */
    readonly field: string | null = null,
    /** Where in the run, e.g. "step 6"; set by the trainer. */
    readonly where: string | null = null,
    /** A last clause (what to do next), set by the trainer. */
    readonly next: string | null = null,
  ) {
    super(`${peer}: ${call} ${what}${where ? ` at ${where}` : ""}${field ? ` (${field})` : ""}${next ? `; ${next}` : ""}`);
  }

  /** The same failure, placed in the run (`where`, e.g. "rl step 6") with what to do next. */
  atStep(where: string, next?: string): PeerError {
    return new PeerError(this.peer, this.call, this.what, this.field, this.where ?? where, next ?? this.next);
  }

  /** A deadline that passed. */
  static timeout(peer: string, call: string, seconds: number, field: string): PeerError {
    return new PeerError(peer, call, `did not answer within ${+seconds.toFixed(3)} s`, field);
  }
}

/** Process groups started by spawnGroup and still running: killed when this process exits. */
const liveGroups = new Set<number>();
let exitHook = false;

/** SIGKILL every process in the group led by `pid` (no error when it is gone already). */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals = "SIGKILL"): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left in the group
  }
}

/**
 * `spawn` in a new process group (detached), so that everything the child starts (vLLM's engine
 * core and `multiprocessing.resource_tracker`, torchrun's ranks) can be killed together: when the
 * child exits, its group is SIGKILLed; so is every live group when this process exits or is ended
 * by SIGTERM or SIGHUP. A Ctrl-C on the terminal reaches only this process, which then stops its
 * children itself.
 */
export function spawnGroup(cmd: string, args: string[], opts: SpawnOptions): ChildProcess {
  const child = spawn(cmd, args, { ...opts, detached: process.platform !== "win32" });
  const pid = child.pid;
  if (pid !== undefined && process.platform !== "win32") {
    liveGroups.add(pid);
    child.once("exit", () => {
      killGroup(pid);
      liveGroups.delete(pid);
    });
    if (!exitHook) {
      exitHook = true;
      const killAll = () => {
        for (const g of liveGroups) killGroup(g);
      };
      process.on("exit", killAll);
      // 'exit' does not run when a signal ends this process: kill the groups, then end as the
      // signal would have (unless another listener, such as a server's graceful stop, handles it).
      for (const sig of ["SIGTERM", "SIGHUP"] as const) {
        const onSignal = () => {
          killAll();
          if (process.listenerCount(sig) === 1) {
            process.removeListener(sig, onSignal);
            process.kill(process.pid, sig);
          }
        };
        process.on(sig, onSignal);
      }
    }
  }
  return child;
}
