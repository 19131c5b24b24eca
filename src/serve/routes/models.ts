/** GET /v1/models and /v1/models/{id}: the one served model; GET /health (200 while serving, as vLLM). */
import type { FastifyInstance } from "fastify";
import type { ServeContext } from "../context.ts";
import { ApiError } from "../errors.ts";

export function modelRoutes(app: FastifyInstance, ctx: ServeContext): void {
  const card = () => ({ id: ctx.modelName, object: "model", created: ctx.created, owned_by: "rlvr", max_model_len: ctx.engine.info().maxSeqLen });
  app.get("/health", async () => ({ status: "ok" }));
  app.get("/v1/models", async () => ({ object: "list", data: [card()] }));
  app.get<{ Params: { id: string } }>("/v1/models/:id", async (req) => {
    if (req.params.id !== ctx.modelName) throw new ApiError(404, `the model "${req.params.id}" does not exist; this server serves "${ctx.modelName}"`, "invalid_request_error", "model", "model_not_found");
    return card();
  });
}
