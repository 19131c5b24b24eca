/** Training routes of the Tinker protocol: create_model, get_info, unload_model, forward / forward_backward (protobuf), optim_step. */
import { UserError } from "../futures.ts";
import { decodeForwardBackwardRequest, encodeForwardBackwardOutput } from "../proto.ts";
import { runForwardBackward } from "../train.ts";
import type { FastifyInstance } from "fastify";
import { engineLora, requestBody, type LoraConfig, type TinkerState } from "../state.ts";

export function trainingRoutes(app: FastifyInstance, st: TinkerState): void {
  app.post("/api/v1/create_model", async (req) => {
    const b = requestBody(req);
    const dir = st.baseDir(b["base_model"], "create_model.base_model");
    const lora = (b["lora_config"] ?? null) as LoraConfig | null;
    if (lora !== null && (typeof lora !== "object" || Array.isArray(lora))) throw new UserError("create_model.lora_config must be an object {rank, seed, train_mlp, train_attn, train_unembed}");
    if (lora) engineLora(lora); // checked here, so a bad config fails the request, not its future
    const opt = b["optimizer_config"] as { type?: string } | undefined;
    if (opt && opt.type !== "adamw") throw new UserError(`create_model.optimizer_config.type: only "adamw" is supported, got "${opt.type}"`);
    const id = st.futures.submit(async () => {
      const m = await st.createModel(b, dir, String(b["base_model"]), lora);
      return { json: { type: "create_model", model_id: m.id } };
    }, `${String(b["session_id"])}/${String(b["model_seq_id"])}/create`);
    return { request_id: id };
  });
  app.post("/api/v1/get_info", async (req) => {
    const m = st.model(requestBody(req)["model_id"]);
    const info = m.engine.info();
    return { type: "get_info", model_id: m.id, model_name: m.baseModel, is_lora: m.lora !== null, lora_rank: m.lora?.rank ?? null, model_data: { arch: info.engine, model_name: m.baseModel, tokenizer_id: m.dir } };
  });
  app.post("/api/v1/unload_model", async (req) => {
    const m = st.model(requestBody(req)["model_id"]);
    st.training.delete(m.id);
    return {
      request_id: st.futures.submit(async () => {
        await m.queue.drain();
        await st.unload(m);
        return { json: { type: "unload_model", model_id: m.id } };
      }),
    };
  });
  app.post("/api/v1/forward_backward", async (req) => {
    if (!Buffer.isBuffer(req.body)) throw new UserError("forward_backward: expected a protobuf body (Content-Type: application/x-protobuf), as the tinker SDK sends");
    if (req.headers["content-encoding"]) throw new UserError(`forward_backward: Content-Encoding ${String(req.headers["content-encoding"])} is not supported`);
    const fb = decodeForwardBackwardRequest(req.body);
    return st.submitTraining(fb.forwardOnly ? "forward" : "forward_backward", { model_id: fb.modelId, seq_id: fb.seqId }, async (m) => {
      const r = await runForwardBackward(m.engine, fb);
      const outs = r.outputs.map((x) => ({ logprobs: x.logprobs, elementwise_loss: x.elementwise_loss }));
      const json = { loss_fn_output_type: "ArrayRecord", metrics: r.metrics, loss_fn_outputs: outs.map((x) => ({ logprobs: tensorJson(x.logprobs), elementwise_loss: tensorJson(x.elementwise_loss) })) };
      return { json, proto: encodeForwardBackwardOutput(outs, r.metrics) };
    });
  });
  app.post("/api/v1/optim_step", async (req) => {
    const b = requestBody(req);
    if (b["optimizer_params"] !== undefined) throw new UserError("optim_step: only AdamParams (adam_params) are supported");
    const p = (b["adam_params"] ?? {}) as Record<string, unknown>;
    const num = (k: string, d: number): number => {
      const v = p[k] ?? d;
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0) throw new UserError(`optim_step.adam_params.${k} must be a finite number >= 0, got ${JSON.stringify(v)}`);
      return v;
    };
    // Tinker's AdamParams defaults (tinker/types/optimizer.py).
    const step = { lr: num("learning_rate", 1e-4), beta1: num("beta1", 0.9), beta2: num("beta2", 0.95), eps: num("eps", 1e-12), weightDecay: num("weight_decay", 0), maxGradNorm: num("grad_clip_norm", 0) };
    return st.submitTraining("optim_step", b, async (m) => {
      const r = await m.engine.optimStep(step);
      return { json: { type: "optim_step", metrics: { grad_norm: r.gradNorm } } };
    });
  });
}

/** A float32 TensorData in the SDK's JSON shape (NaN → null). */
function tensorJson(a: Float64Array) {
  return { data: Array.from(a, (v) => (Number.isNaN(v) ? null : v)), dtype: "float32", shape: [a.length] };
}
