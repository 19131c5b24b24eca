/**
 * The `model:` block of a run config (src/config/schema.ts composes it): the checkpoint or random
 * initialisation, the engine kind and the torch engine's settings.
 */
import { z } from "zod";
import { modelInitSchema } from "./init.ts"; // model.init: a random Llama-style model's shape
import { loraConfigSchema } from "./lora.ts";

const posInt = z.number().int().positive();

export const modelSchema = z
  .strictObject({
    /** Hugging Face-layout checkpoint directory to start from. */
    path: z.string().optional(),
    /** Random initialisation (when no path). */
    init: modelInitSchema.optional(),
    /**
     * Engine kind: "embedded" (default, in-process), "torch" (Python worker), or "auto": torch when
     * it is set up (python/.venv, model.python or $RLVR_PYTHON) and a cached 3-step probe on this
     * model finds it faster, else embedded; the choice and its reason are printed (docs/engines.md).
     * The torch-only fields below apply when auto picks torch.
     */
    engine: z.enum(["embedded", "torch", "auto", "tinker"]).default("embedded"),
    /**
     * engine: tinker — train on a model held by a Tinker API server (`rlvr tinker`, or any server
     * of the tinker 0.38 protocol) through a LoRA training client (src/tinker/engine.ts,
     * docs/tinker.md). model.path still gives the tokenizer (and the context length).
     */
    tinker: z
      .strictObject({
        /** The server, e.g. http://127.0.0.1:8000. */
        baseUrl: z.string().url(),
        /** The base model name the server knows (default: model.path). */
        baseModel: z.string().min(1).optional(),
        /** LoRA rank asked of the server. */
        rank: posInt.max(4096).default(32),
        /** API key (default $TINKER_API_KEY; rlvr tinker checks none). */
        apiKey: z.string().optional(),
      })
      .optional(),
    /** Torch engine only: Python with torch + transformers (default $RLVR_PYTHON, python/.venv, python3). */
    python: z.string().optional(),
    /** Torch engine only: "auto" (cuda when available), "cpu", "cuda", "cuda:N". */
    device: z.string().default("auto"),
    /** Torch engine only: "auto" (bfloat16 autocast on GPU, float32 on CPU), "float32", "bfloat16". */
    dtype: z.enum(["auto", "float32", "bfloat16"]).default("auto"),
    /** Torch engine only: recompute activations in backward (less memory). */
    gradientCheckpointing: z.boolean().default(false),
    /** Torch engine only: most tokens (rows × padded length) per forward; larger batches are micro-batched. */
    tokenBudget: posInt.max(1 << 30).default(16384),
    /**
     * Both engines: run the prompt positions a group of consecutive rows shares (a GRPO group) once
     * when training and scoring (exact up to float rounding; torch: python/rlvr_worker/scoring.py,
     * embedded: src/engines/embedded/prefix.ts). Turn off only to measure what it saves.
     */
    sharedPrompts: z.boolean().default(true),
    /**
     * Embedded engine only: sample, score and train on onnxruntime's native CPU kernels instead of
     * jax-js's WebAssembly ones (EmbeddedEngineOptions.nativeKernels; needs the optional package
     * onnxruntime-node, Node only). Default: RLVR_NATIVE_KERNELS=on/off, else off.
     */
    nativeKernels: z.boolean().optional(),
    /** Torch engine only: data-parallel training under torchrun (FSDP2 or DDP); see docs/scaling.md. */
    distributed: z
      .strictObject({
        nprocPerNode: posInt.max(1024),
        nnodes: posInt.max(1 << 16).default(1),
        nodeRank: z.number().int().min(0).default(0),
        masterAddr: z.string().default("127.0.0.1"),
        masterPort: z.number().int().min(1).max(65535).optional(),
        strategy: z.enum(["fsdp2", "ddp"]).default("fsdp2"),
        backend: z.enum(["gloo", "nccl"]).optional(),
        /** The process group's timeout in seconds: a collective waiting longer (a rank dead or hung) fails. */
        timeoutS: z.number().positive().default(1800),
      })
      .refine((d) => d.nnodes === 1 || d.masterPort !== undefined, { message: "set masterPort (a TCP port on node 0) when nnodes > 1", path: ["masterPort"] })
      .optional(),
    /** Train LoRA adapters instead of all weights, on either engine (src/engines/lora.ts, docs/engines.md). */
    lora: loraConfigSchema.optional(),
    /** Torch engine only: deadline of one worker call (forward, backward, score, sample, optimizer step), seconds; past it the worker is killed and the run stops with one line. */
    callTimeoutS: z.number().positive().default(1800),
    /** Torch engine only: deadline of the worker's start, model loads and saves (a first call may load or compile), seconds. */
    loadTimeoutS: z.number().positive().default(3600),
  })
  .refine((m) => m.path !== undefined || m.init !== undefined, { message: "set model.path (a checkpoint directory) or model.init (a random model's size)" })
  .refine((m) => m.distributed === undefined || m.engine === "torch", { message: "model.distributed needs engine: torch", path: ["distributed"] })
  .refine((m) => (m.engine === "tinker") === (m.tinker !== undefined), { message: "model.engine: tinker and model.tinker (baseUrl, …) go together: set both or neither", path: ["tinker"] })
  .refine((m) => m.engine !== "tinker" || m.lora === undefined, { message: "engine: tinker trains a LoRA adapter on the server; set its rank in model.tinker.rank and drop model.lora", path: ["lora"] })
  .refine((m) => m.distributed === undefined || m.lora === undefined, { message: "LoRA under model.distributed is not supported yet; train LoRA in one process (drop model.distributed)", path: ["lora"] });

export type ModelBlock = z.output<typeof modelSchema>;
