/**
 * Capture mode's routes: POST /v1/rlvr/episodes/{id}/reward, GET /v1/rlvr/episodes/{id}, and
 * POST /v1/rlvr/train (one RL update of the served model on every scored episode; ../train.ts),
 * and with weight sync on, POST /v1/rlvr/weights {path, policy_version}: load a checkpoint a
 * trainer wrote (the OpenAI sampler's syncWeights), between engine calls.
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { ServeContext } from "../context.ts";
import { ApiError, fromZod } from "../errors.ts";
import { trainServed } from "../train.ts";

const trainBody = z.object({ lr: z.number().gt(0).optional(), epochs: z.number().int().min(1).optional(), maxGradNorm: z.number().gt(0).optional(), algorithm: z.union([z.string(), z.record(z.string(), z.unknown())]).optional() });

const weightsBody = z.object({ path: z.string().min(1), policy_version: z.number().int().min(0) });

const rewardBody = z.object({ reward: z.number().refine(Number.isFinite, "must be a finite number") });

export function episodeRoutes(app: FastifyInstance, ctx: ServeContext): void {
  const store = () => {
    if (!ctx.episodes) throw new ApiError(404, "capture mode is off: start the server with --capture (or serve({capture: true}))", "invalid_request_error", null, "capture_off");
    return ctx.episodes;
  };
  app.post<{ Params: { id: string } }>("/v1/rlvr/episodes/:id/reward", async (req) => {
    const eps = store();
    const r = rewardBody.safeParse(req.body ?? {});
    if (!r.success) throw fromZod(r.error);
    const ep = eps.get(req.params.id);
    if (!ep) throw new ApiError(404, `no episode "${req.params.id}": send its completions with the x-rlvr-episode header (or metadata.episode_id) first`, "invalid_request_error", "id", "episode_not_found");
    eps.reward(ep.id, r.data.reward);
    return { id: ep.id, group: ep.group, reward: r.data.reward, turns: ep.turns.length };
  });
  app.get<{ Params: { id: string } }>("/v1/rlvr/episodes/:id", async (req) => {
    const ep = store().get(req.params.id);
    if (!ep) throw new ApiError(404, `no episode "${req.params.id}"`, "invalid_request_error", "id", "episode_not_found");
    return ep;
  });
  app.post("/v1/rlvr/train", async (req) => {
    store();
    const r = trainBody.safeParse(req.body ?? {});
    if (!r.success) throw fromZod(r.error);
    let rep;
    try {
      rep = await trainServed(ctx, r.data as never);
    } catch (e) {
      if (/config error|unknown|algorithm/i.test((e as Error).message)) throw new ApiError(400, (e as Error).message, "invalid_request_error", "algorithm", "invalid_value");
      throw e;
    }
    return rep ?? { episodes: 0, sequences: 0, policyVersion: ctx.policyVersion, note: "no scored episodes: nothing trained" };
  });
  app.post("/v1/rlvr/weights", async (req) => {
    if (!ctx.weightSync) throw new ApiError(404, "weight sync is off: start the server with --weight-sync (or serve({weightSync: true})) to let a trainer load weights", "invalid_request_error", null, "weight_sync_off");
    const r = weightsBody.safeParse(req.body ?? {});
    if (!r.success) throw fromZod(r.error);
    await ctx.batcher.exclusive(async () => {
      try {
        await ctx.engine.load(r.data.path);
      } catch (e) {
        throw new ApiError(400, `cannot load weights from ${r.data.path}: ${(e as Error).message}`, "invalid_request_error", "path", "invalid_value");
      }
      ctx.policyVersion = r.data.policy_version;
    });
    return { policy_version: ctx.policyVersion };
  });
}
