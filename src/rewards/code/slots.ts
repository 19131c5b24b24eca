/**
 * The one cap on concurrently running sandboxes in this process, shared by every thread.
 *
 * The slots live in a SharedArrayBuffer: the main thread creates it at first use, and the
 * verifier pool hands it to each worker (`workerData.sandboxSlots` → adoptSandboxSlots), so a
 * pool of N workers on a 2-core host still runs at most `limit` sandboxes at once, not N × limit.
 * Each taken slot records which thread holds it and the launcher's pid (the sandbox's process
 * group), so the thread that terminates a worker mid-sandbox can kill what that worker started
 * (killThreadSandboxes).
 *
 * Layout (Int32Array): [0] limit, [1] generation (bumped and notified on every release),
 * then MAX_SLOTS pairs [owner thread id + 1 (0 = free), launcher pid (0 = not started yet)].
 */
import { availableParallelism } from "node:os";
import { threadId } from "node:worker_threads";

/** Most sandboxes the cap can be raised to. */
export const MAX_SLOTS = 256;
const LIMIT = 0;
const GEN = 1;
const owner = (i: number) => 2 + 2 * i;
const pidAt = (i: number) => 3 + 2 * i;

let view = new Int32Array(new SharedArrayBuffer(4 * (2 + 2 * MAX_SLOTS)));
view[LIMIT] = Math.max(1, availableParallelism());

/** The shared slots of this process (hand it to worker threads). */
export function sandboxSlotsBuffer(): SharedArrayBuffer {
  return view.buffer as SharedArrayBuffer;
}

/** Use the slots of the thread that started this one (a verifier-pool worker calls it at boot). */
export function adoptSandboxSlots(buffer: SharedArrayBuffer): void {
  if (buffer.byteLength !== view.byteLength) throw new Error("sandbox slots: buffer of the wrong size");
  view = new Int32Array(buffer);
}

/** Change how many sandboxes may run at once in this process, in every thread (1..MAX_SLOTS). */
export function setSlotLimit(n: number): void {
  Atomics.store(view, LIMIT, Math.min(MAX_SLOTS, Math.max(1, Math.floor(n))));
  Atomics.add(view, GEN, 1);
  Atomics.notify(view, GEN);
}

/** The current cap. */
export function slotLimit(): number {
  return Atomics.load(view, LIMIT);
}

/** Sandboxes running now, in all threads. */
export function slotsInUse(): number {
  let n = 0;
  for (let i = 0; i < MAX_SLOTS; i++) if (Atomics.load(view, owner(i)) !== 0) n++;
  return n;
}

/** One taken slot. */
export interface SlotLease {
  /** Record the launcher's pid (its process group is the sandbox's). */
  setPid(pid: number): void;
  /** Free the slot (idempotent). */
  release(): void;
}

/** Take a slot, waiting (without blocking the event loop) while `limit` are taken. */
export async function acquireSlot(): Promise<SlotLease> {
  const me = threadId + 1;
  for (;;) {
    const gen = Atomics.load(view, GEN);
    const limit = Atomics.load(view, LIMIT);
    let inUse = 0;
    for (let i = 0; i < MAX_SLOTS; i++) if (Atomics.load(view, owner(i)) !== 0) inUse++;
    if (inUse < limit) {
      for (let i = 0; i < MAX_SLOTS; i++) {
        if (Atomics.compareExchange(view, owner(i), 0, me) !== 0) continue;
        // Lost a race past the limit: give it back and wait like everyone else.
        if (slotsInUse() > limit) {
          free(i, me);
          break;
        }
        return lease(i, me);
      }
    }
    // Woken by a release; the timer both bounds a missed wake-up and keeps the event loop alive.
    const wait = (Atomics as unknown as WaitAsync).waitAsync(view, GEN, gen, 200);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([wait.value, new Promise((r) => (timer = setTimeout(r, 250)))]);
    clearTimeout(timer);
  }
}

/** Atomics.waitAsync (Node ≥ 16; typed in lib es2024, newer than this project's target). */
interface WaitAsync {
  waitAsync(view: Int32Array, index: number, value: number, timeoutMs: number): { async: boolean; value: Promise<string> | string };
}

function lease(i: number, me: number): SlotLease {
  let done = false;
  return {
    setPid(pid) {
      if (!done && Atomics.load(view, owner(i)) === me) Atomics.store(view, pidAt(i), pid);
    },
    release() {
      if (done) return;
      done = true;
      free(i, me);
    },
  };
}

function free(i: number, me: number): void {
  Atomics.store(view, pidAt(i), 0);
  if (Atomics.compareExchange(view, owner(i), me, 0) !== me) return;
  Atomics.add(view, GEN, 1);
  Atomics.notify(view, GEN);
}

/** Slots held by thread `tid` (its launcher pids; 0 = not started yet). */
export function threadSlots(tid: number): number[] {
  const pids: number[] = [];
  for (let i = 0; i < MAX_SLOTS; i++) if (Atomics.load(view, owner(i)) === tid + 1) pids.push(Atomics.load(view, pidAt(i)));
  return pids;
}

/**
 * SIGKILL the process group of every sandbox thread `tid` holds, and with `free` also give its
 * slots back (only once that thread is gone: a live one releases its own).
 * @returns how many sandboxes were signalled
 */
export function killThreadSandboxes(tid: number, opts: { free?: boolean } = {}): number {
  let n = 0;
  for (let i = 0; i < MAX_SLOTS; i++) {
    if (Atomics.load(view, owner(i)) !== tid + 1) continue;
    const pid = Atomics.load(view, pidAt(i));
    if (pid > 0) {
      n++;
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
    if (opts.free) free(i, tid + 1);
  }
  return n;
}
