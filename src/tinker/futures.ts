/**
 * Futures and request ordering of the Tinker protocol. Every training or sampling call returns a
 * request id at once; the client polls `retrieve_future` until the result is there (a `try_again`
 * answer meanwhile). Training requests of one model carry increasing `seq_id`s and run in that
 * order, one at a time; a retried request (same model, seq_id and route) gets the first one's
 * request id, so it runs once.
 */
import { randomUUID } from "node:crypto";

/** A settled future: a JSON body, or a protobuf body (with its JSON twin for clients that ask for JSON). */
export interface FutureResult {
  json: unknown;
  proto?: Uint8Array;
}

interface Entry {
  state: "pending" | "done" | "failed";
  result?: FutureResult;
  error?: string;
  category?: "user" | "server";
  waiters: (() => void)[];
}

/** An error the client caused (bad input): reported with category "user". */
export class UserError extends Error {}

/** The futures of one server. A settled future is kept `keepMs` (default 10 minutes), then dropped. */
export class FutureStore {
  private entries = new Map<string, Entry>();
  private byKey = new Map<string, string>();
  constructor(private readonly keepMs = 10 * 60_000) {}

  /**
   * Start `work` and return its request id. With `key` set, a second call with the same key
   * returns the first call's id and does not start `work` again.
   */
  submit(work: () => Promise<FutureResult>, key?: string): string {
    if (key !== undefined) {
      const known = this.byKey.get(key);
      if (known) return known;
    }
    const id = randomUUID();
    if (key !== undefined) this.byKey.set(key, id);
    const e: Entry = { state: "pending", waiters: [] };
    this.entries.set(id, e);
    void Promise.resolve()
      .then(work)
      .then(
        (r) => {
          e.state = "done";
          e.result = r;
        },
        (err: unknown) => {
          e.state = "failed";
          e.error = err instanceof Error ? err.message : String(err);
          e.category = err instanceof UserError ? "user" : "server";
        },
      )
      .finally(() => {
        for (const w of e.waiters.splice(0)) w();
        setTimeout(() => {
          this.entries.delete(id);
          if (key !== undefined) this.byKey.delete(key);
        }, this.keepMs).unref();
      });
    return id;
  }

  /** Wait up to `ms` for request `id`; undefined when no such request. */
  async wait(id: string, ms: number): Promise<Entry | undefined> {
    const e = this.entries.get(id);
    if (!e || e.state !== "pending") return e;
    await new Promise<void>((res) => {
      const t = setTimeout(res, ms);
      e.waiters.push(() => {
        clearTimeout(t);
        res();
      });
    });
    return e;
  }
}

/** Runs one model's requests one at a time in `seq_id` order (a request waits for the ones before it). */
export class SeqQueue {
  private next: number | null = null;
  private tail: Promise<unknown> = Promise.resolve();
  private arrived = new Map<number, () => void>();

  /**
   * Run `fn` when every request with a smaller seq_id has started and the ones before finished.
   * The first seq_id seen starts the sequence. A request whose predecessor never arrives waits
   * `gapMs` and then runs anyway (the client gave up on it).
   */
  run<T>(seqId: number, fn: () => Promise<T>, gapMs = 30_000): Promise<T> {
    if (this.next === null) this.next = seqId;
    if (seqId < this.next) return Promise.reject(new UserError(`seq_id ${seqId} arrived after seq_id ${this.next - 1} had run: requests of one model must be sent in seq_id order`));
    const turn = seqId === this.next ? Promise.resolve() : new Promise<void>((res) => {
      const t = setTimeout(res, gapMs);
      this.arrived.set(seqId, () => (clearTimeout(t), res()));
    });
    return turn.then(() => {
      this.next = Math.max(this.next!, seqId + 1);
      this.arrived.get(this.next)?.();
      this.arrived.delete(this.next);
      const p = this.tail.then(fn);
      this.tail = p.catch(() => undefined);
      return p;
    });
  }

  /** Resolves when every request started so far has finished. */
  async drain(): Promise<void> {
    await this.tail;
  }
}
