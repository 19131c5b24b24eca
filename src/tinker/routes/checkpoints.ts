/** Checkpoint routes of the Tinker protocol: save/load state, sampler and external weights, downloads, training runs and checkpoint listings. */
import { createReadStream, existsSync } from "node:fs";
import { cp, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { UserError } from "../futures.ts";
import { checkName, engineLora, type TrainingModel } from "../state.ts";
import { readAdapterInfo } from "../../engines/lora.ts";
import type { FastifyInstance } from "fastify";
import { requestBody, type TinkerState } from "../state.ts";

export function checkpointRoutes(app: FastifyInstance, st: TinkerState): void {
  app.post("/api/v1/save_weights", async (req) => {
    const b = requestBody(req);
    const name = checkName(b["path"] ?? `step-${String(b["seq_id"])}`, "save_weights.path");
    return st.submitTraining("save_weights", b, async (m) => ({ json: { type: "save_weights", path: await st.saveCheckpoint(m, "weights", name, true) } }));
  });
  app.post("/api/v1/save_weights_for_sampler", async (req) => {
    const b = requestBody(req);
    if (b["kind"] !== undefined && b["kind"] !== "snapshot") throw new UserError(`save_weights_for_sampler.kind: only "snapshot" is supported, got "${String(b["kind"])}"`);
    const named = b["path"] !== undefined && b["path"] !== null;
    const name = named ? checkName(b["path"], "save_weights_for_sampler.path") : `ephemeral-${String(b["seq_id"])}-${randomUUID().slice(0, 6)}`;
    return st.submitTraining("save_weights_for_sampler", b, async (m) => {
      const path = await st.saveCheckpoint(m, "sampler_weights", name, false);
      if (named) return { json: { type: "save_weights_for_sampler", path } };
      const s = await st.newSampler(m.baseModel, join(st.dataDir, m.id, "sampler_weights", name), path);
      return { json: { type: "save_weights_for_sampler", path, sampling_session_id: s.id } };
    });
  });
  app.post("/api/v1/save_weights_external", async (req) => {
    const b = requestBody(req);
    if (b["age_encryption_recipients"]) throw new UserError("save_weights_external: age encryption is not supported by rlvr's Tinker server");
    const name = checkName(b["path"], "save_weights_external.path");
    return st.submitTraining("save_weights_external", b, async (m) => {
      const path = await st.saveCheckpoint(m, "external_weights", name, false);
      return { json: { type: "save_weights_external", path, size_bytes: await dirSize(join(st.dataDir, m.id, "external_weights", name)) } };
    });
  });
  // Checkpoint archives as local downloads: one URL per file, served by this server.
  app.get<{ Params: { id: string; "*": string } }>("/api/v1/training_runs/:id/checkpoints/*", async (req) => {
    const [kind = "", name = "", what = ""] = req.params["*"].split("/");
    if (what !== "external_weights_urls") throw new UserError(`no route GET ${req.url}`);
    const dir = st.checkpointDir(req.params.id, kind, name);
    const base = `${req.protocol}://${String(req.headers.host)}/api/v1/files/${encodeURIComponent(req.params.id)}/${kind}/${name}`;
    const urls = Object.fromEntries((await readdir(dir)).sort().map((f) => [f, `${base}/${encodeURIComponent(f)}`]));
    return { urls, expires: new Date(Date.now() + 7 * 24 * 3600_000).toISOString() };
  });
  app.delete<{ Params: { id: string; "*": string } }>("/api/v1/training_runs/:id/checkpoints/*", async (req, reply) => {
    const [kind = "", name = ""] = req.params["*"].split("/");
    await rm(st.checkpointDir(req.params.id, kind, name), { recursive: true, force: true });
    return reply.status(200).send(null);
  });
  app.get<{ Params: { run: string; kind: string; name: string; file: string } }>("/api/v1/files/:run/:kind/:name/:file", async (req, reply) => {
    const { run, kind, name, file } = req.params;
    const dir = st.checkpointDir(run, kind, name);
    if (!(await readdir(dir)).includes(file)) throw new UserError(`no file ${file} in tinker://${run}/${kind}/${name}`);
    return reply.type("application/octet-stream").send(createReadStream(join(dir, file)));
  });
  app.post("/api/v1/load_weights", async (req) => {
    const b = requestBody(req);
    const dir = st.pathDir(b["path"], "load_weights.path");
    const withOptimizer = b["optimizer"] === true;
    const load = async (m: TrainingModel) => {
      checkLoadable(m, dir, String(b["path"]));
      let from = dir;
      if (!withOptimizer && existsSync(join(dir, "optimizer.safetensors"))) {
        from = await mkdtemp(join(tmpdir(), "rlvr-tinker-load-"));
        await cp(dir, from, { recursive: true, filter: (src) => !src.endsWith("optimizer.safetensors") });
      }
      try {
        await m.engine.load(from);
      } finally {
        if (from !== dir) await rm(from, { recursive: true, force: true });
      }
      return { json: { type: "load_weights", path: b["path"], model_id: m.id } };
    };
    if (b["model_id"] !== undefined) return st.submitTraining("load_weights", b, load);
    // Create-via-load: a new model whose first request is this load.
    const base = typeof b["base_model"] === "string" ? st.baseDir(b["base_model"], "load_weights.base_model") : dir;
    const id = st.futures.submit(async () => {
      const m = await st.createModel(b, base, String(b["base_model"] ?? b["path"]), st.adapterLora(dir));
      return load(m);
    }, `${String(b["session_id"])}/${String(b["model_seq_id"])}/create`);
    return { request_id: id };
  });
  app.post("/api/v1/weights_info", async (req) => {
    const p = requestBody(req)["tinker_path"];
    const dir = st.pathDir(p, "weights_info.tinker_path");
    const m = st.training.get(String(p).slice(9).split("/")[0]!);
    const lora = st.adapterLora(dir);
    const base = m?.baseModel ?? readAdapterInfo(dir)?.base ?? "unknown";
    return { base_model: base, is_lora: lora !== null, lora_rank: lora?.rank ?? null, train_attn: lora?.train_attn ?? null, train_mlp: lora?.train_mlp ?? null, train_unembed: lora?.train_unembed ?? null };
  });
  app.get("/api/v1/training_runs", async () => {
    const runs = [...st.training.values()].map((m) => st.runJson(m));
    return { training_runs: runs, cursor: { offset: 0, limit: runs.length, total_count: runs.length } };
  });
  app.get<{ Params: { id: string } }>("/api/v1/training_runs/:id", async (req) => st.runJson(st.model(req.params.id)));
  app.get<{ Params: { id: string } }>("/api/v1/training_runs/:id/checkpoints", async (req) => ({ checkpoints: await st.listCheckpoints(st.model(req.params.id).id) }));
}

/** Total bytes of the files in `dir` (one level). */
async function dirSize(dir: string): Promise<number> {
  let n = 0;
  for (const f of await readdir(dir)) n += (await stat(join(dir, f))).size;
  return n;
}

/** A LoRA client loads an adapter of its own rank and targets, a full client a full checkpoint. @throws UserError naming both. */
function checkLoadable(m: TrainingModel, dir: string, path: string): void {
  const have = readAdapterInfo(dir)?.lora;
  const key = (l: { rank: number; targets: readonly string[] }) => `LoRA rank ${l.rank} on ${[...l.targets].sort().join(", ")}`;
  const want = m.lora ? key(engineLora(m.lora)) : "every weight (a full checkpoint)";
  const got = have ? key(have) : "every weight (a full checkpoint)";
  if (want !== got) throw new UserError(`load_weights.path: ${path} holds ${got}; training client ${m.id} trains ${want}; load it with create_training_client_from_state instead`);
}
