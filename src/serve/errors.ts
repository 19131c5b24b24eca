/**
 * Errors in the OpenAI shape: `{error: {message, type, param, code}}` with a 4xx/5xx status, as
 * the OpenAI API and vLLM answer them, so an `openai` SDK client raises its usual typed errors
 * (BadRequestError, NotFoundError, ...). A bad request is answered, never thrown past the server.
 */
import type { ZodError } from "zod";

/** One error the server answers with; `status` is the HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string = "invalid_request_error",
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }

  /** The response body. */
  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** A request body that failed its schema: the first issue, naming the field (e.g. `max_tokens`). */
export function fromZod(e: ZodError): ApiError {
  const issue = e.issues[0]!;
  const param = issue.path.length > 0 ? issue.path.map(String).join(".") : null;
  return new ApiError(400, `invalid request at ${param ?? "body"}: ${issue.message}`, "invalid_request_error", param, "invalid_value");
}

/**
 * Any error thrown while answering (Fastify's own, e.g. malformed JSON, or ours) as an ApiError.
 * Errors with a 4xx statusCode keep it; everything else is a 500 `server_error`.
 */
export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const err = e as { statusCode?: number; message?: string; code?: string };
  const status = typeof err.statusCode === "number" ? err.statusCode : 500;
  if (err.code === "FST_ERR_CTP_INVALID_JSON_BODY" || (status === 400 && err instanceof SyntaxError)) {
    return new ApiError(400, `the request body is not valid JSON: ${err.message ?? ""}`, "invalid_request_error", null, "invalid_json");
  }
  if (status >= 400 && status < 500) return new ApiError(status, err.message ?? "bad request", "invalid_request_error", null, err.code ?? null);
  return new ApiError(500, `internal server error: ${err.message ?? String(e)}`, "server_error", null, null);
}
