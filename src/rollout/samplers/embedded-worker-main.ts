/**
 * The worker thread of EmbeddedWorkerSampler: its own jax-js runtime (thread count from
 * workerData, set before jax-js is imported) holding a copy of the policy, loaded from checkpoint
 * directories the trainer writes. Messages: {id, kind: "load", dir} and {id, kind: "sample", req};
 * one reply {id, ok, value | error} each, in order.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Engine, SampleRequest } from "../../core/engine.ts";

process.env["RLVR_THREADS"] = String((workerData as { threads: number }).threads);
const { openEngine } = await import("../../engines/open.ts");
const { loadTokenizer } = await import("../../tokenizers/index.ts");

let engine: Engine | null = null;

type Message = { id: number; kind: "load"; dir: string } | { id: number; kind: "sample"; req: SampleRequest } | { id: number; kind: "close" };

async function handle(m: Message): Promise<unknown> {
  if (m.kind === "load") {
    if (engine) await engine.load(m.dir);
    else engine = await openEngine({ path: m.dir, engine: "embedded" }, { tokenizer: await loadTokenizer(m.dir) });
    return null;
  }
  if (m.kind === "sample") {
    if (!engine) throw new Error("sampler worker: sample before the first load");
    return engine.sample(m.req);
  }
  await engine?.close();
  engine = null;
  return null;
}

// One message at a time, in arrival order: a weight load queued behind a sample waits for it.
let queue: Promise<void> = Promise.resolve();
parentPort!.on("message", (m: Message) => {
  queue = queue.then(async () => {
    try {
      parentPort!.postMessage({ id: m.id, ok: true, value: await handle(m) });
    } catch (e) {
      parentPort!.postMessage({ id: m.id, ok: false, error: (e as Error).message });
    }
  });
});
