/** Service routes of the Tinker protocol: health, client config, sessions and heartbeats, capabilities, futures. */
import { randomUUID } from "node:crypto";
import { UserError } from "../futures.ts";
import type { FastifyInstance, FastifyReply } from "fastify";
import { requestBody, type TinkerState } from "../state.ts";

export function serviceRoutes(app: FastifyInstance, st: TinkerState): void {
  app.get("/api/v1/healthz", async () => ({ status: "ok" }));
  app.post("/api/v1/client/config", async () => ({ pjwt_auth_enabled: false, credential_default_source: "api_key", proto_compress_fwdbwd: false, parallel_fwdbwd_chunks: false, use_pyqwest_transport: false, sample_use_retrieve_futures: false, custom_loss_server_side: false, sample_join_sampling_session: false }));
  app.post("/api/v1/client/dynamic_config", async () => ({ refresh_interval_sec: 300, sample_cancel_enabled: false }));
  app.post("/api/v1/telemetry", async () => ({ status: "accepted" }));
  app.post("/api/v1/cancel_future", async () => ({}));
  app.post("/api/v1/create_session", async (req) => {
    requestBody(req);
    const id = `session-${randomUUID().slice(0, 8)}`;
    st.sessions.set(id, { created: new Date(), lastHeartbeat: new Date() });
    return { type: "create_session", session_id: id };
  });
  app.post("/api/v1/session_heartbeat", async (req) => {
    const id = requestBody(req)["session_id"];
    const s = typeof id === "string" ? st.sessions.get(id) : undefined;
    if (!s) throw new UserError(`session_heartbeat: no session "${String(id)}"`);
    s.lastHeartbeat = new Date();
    return { type: "session_heartbeat" };
  });
  // ServiceClient.close(): the session's training models are released once their requests finish.
  app.post<{ Params: { id: string } }>("/api/v1/sessions/:id/finish", async (req, reply) => {
    const id = req.params.id;
    if (!st.sessions.delete(id)) throw new UserError(`no session "${id}"`);
    for (const m of [...st.training.values()]) {
      if (!m.id.startsWith(`${id}:train:`)) continue;
      st.training.delete(m.id);
      await m.queue.drain();
      await st.unload(m);
    }
    return reply.status(200).send(null);
  });
  app.get("/api/v1/get_server_capabilities", async () => ({
    supported_models: Object.keys(st.models).map((name) => ({ model_name: name, trainable: true, sampleable: true })),
  }));

  app.post("/api/v1/retrieve_future", async (req, reply: FastifyReply) => {
    const id = requestBody(req)["request_id"];
    const e = typeof id === "string" ? await st.futures.wait(id, st.pollMs) : undefined;
    if (!e) return reply.status(404).send({ error: `no request ${String(id)}`, category: "user" });
    if (e.state === "pending") return { type: "try_again", request_id: id, queue_state: "active" };
    if (e.state === "failed") return { error: e.error, category: e.category };
    const accept = String(req.headers["accept"] ?? "");
    if (e.result!.proto && accept.includes("application/x-protobuf")) return reply.type("application/x-protobuf").send(Buffer.from(e.result!.proto));
    return e.result!.json;
  });
}
