/**
 * How the torch engine starts its worker: one Python process, or a torchrun group
 * (`python -m torch.distributed.run … -m rlvr_worker`) when `model.distributed` is set. Rank 0
 * of the group speaks the framed protocol on stdio; the other ranks follow it (see
 * python/rlvr_worker/distributed.py). On more than one node, this process starts node 0's ranks
 * and each other node runs the same torchrun command with its own --node-rank (docs/scaling.md).
 */

/** Data-parallel training under torchrun (the `model.distributed` config block). */
export interface DistributedOptions {
  /** Ranks (processes) on this node: one per GPU, or per CPU share on CPU. */
  nprocPerNode: number;
  /** Nodes in the group (default 1). */
  nnodes?: number;
  /** This node's index; the rlvr process runs on node 0 (default 0). */
  nodeRank?: number;
  /** Address of node 0 that every node can reach (multi-node; default 127.0.0.1). */
  masterAddr?: string;
  /** TCP port on node 0 for the rendezvous (multi-node; single node: a free port is picked). */
  masterPort?: number;
  /** "fsdp2" (shards parameters, gradients and AdamW state; default) or "ddp" (a full replica per rank). */
  strategy?: "fsdp2" | "ddp";
  /** "gloo" (CPU) or "nccl" (CUDA); default: nccl when the worker sees CUDA, else gloo. */
  backend?: "gloo" | "nccl";
  /**
   * The process group's timeout, seconds (default 1800): a collective that waits longer on a rank
   * (one rank dead or hung) fails instead of waiting forever (torch's own default is 10 min for
   * NCCL and 30 min for gloo; rlvr sets it explicitly). Reaches the ranks as RLVR_DIST_TIMEOUT_S.
   */
  timeoutS?: number;
}

/**
 * The worker's command line (after the Python executable) and extra environment.
 * @throws Error naming the model.distributed field and the fix on a bad value.
 */
export function workerLaunch(d?: DistributedOptions): { args: string[]; env: Record<string, string> } {
  if (!d) return { args: ["-u", "-m", "rlvr_worker"], env: {} };
  const field = (name: string, msg: string) => new Error(`config error at model.distributed.${name}: ${msg}`);
  if (!Number.isInteger(d.nprocPerNode) || d.nprocPerNode < 1) throw field("nprocPerNode", `expected an integer >= 1, got ${d.nprocPerNode}`);
  const nnodes = d.nnodes ?? 1;
  const nodeRank = d.nodeRank ?? 0;
  if (!Number.isInteger(nnodes) || nnodes < 1) throw field("nnodes", `expected an integer >= 1, got ${nnodes}`);
  if (nodeRank !== 0) {
    throw field(
      "nodeRank",
      `the rlvr process drives node 0 (got ${nodeRank}); on node ${nodeRank} run \`python -m torch.distributed.run --nnodes ${nnodes} --node-rank ${nodeRank} --nproc-per-node N --master-addr ADDR --master-port PORT -m rlvr_worker\` (docs/scaling.md)`,
    );
  }
  if (d.strategy !== undefined && d.strategy !== "fsdp2" && d.strategy !== "ddp") throw field("strategy", `expected fsdp2 or ddp, got ${String(d.strategy)}`);
  if (d.backend !== undefined && d.backend !== "gloo" && d.backend !== "nccl") throw field("backend", `expected gloo or nccl, got ${String(d.backend)}`);
  const args = ["-u", "-m", "torch.distributed.run", `--nproc-per-node=${d.nprocPerNode}`];
  if (nnodes === 1 && d.masterPort === undefined) {
    args.push("--standalone"); // local rendezvous on a free port
  } else {
    if (d.masterPort === undefined) throw field("masterPort", `set a TCP port on node 0 (e.g. 29500) when nnodes > 1`);
    args.push(`--nnodes=${nnodes}`, `--node-rank=${nodeRank}`, `--master-addr=${d.masterAddr ?? "127.0.0.1"}`, `--master-port=${d.masterPort}`);
  }
  args.push("-m", "rlvr_worker");
  if (d.timeoutS !== undefined && !(d.timeoutS > 0)) throw field("timeoutS", `expected seconds > 0, got ${d.timeoutS}`);
  return { args, env: { RLVR_DIST_TIMEOUT_S: String(d.timeoutS ?? 1800), ...(d.backend ? { RLVR_DIST_BACKEND: d.backend } : {}) } };
}
