// NIP-86 over HTTP: `POST /` with `Content-Type: application/nostr+json+rpc`, a body
// `{"method", "params"}`, authorised by NIP-98 (nip98.ts). An unauthorised call gets 401 and
// `{"error"}`; an unknown method or bad params `{"result": null, "error"}`; success
// `{"result"}`. http.ts hands such requests here and knows nothing else of them.
import type { RelayContext } from "../ingest/context.ts";
import { log } from "../log.ts";
import { callMethod, MethodError } from "./methods.ts";
import { authorize } from "./nip98.ts";

export const RPC_TYPE = "application/nostr+json+rpc";
/** A management call is a method name and a few short params; anything larger is refused unread. */
const MAX_BODY_BYTES = 64 * 1024;

/** Whether a request is a NIP-86 call (the content type says so). */
export const isManagementCall = (req: Request): boolean =>
  req.method === "POST" &&
  (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase() === RPC_TYPE;

export async function handleManagement(
  req: Request,
  ctx: RelayContext,
  cors: Record<string, string>,
): Promise<Response> {
  const answer = (status: number, body: Record<string, unknown>) =>
    new Response(JSON.stringify(body), { status, headers: { ...cors, "Content-Type": RPC_TYPE } });
  const declared = Number(req.headers.get("content-length") ?? 0);
  if (declared > MAX_BODY_BYTES) return answer(413, { result: null, error: "request body too large" });
  const body = new Uint8Array(await req.arrayBuffer());
  if (body.length > MAX_BODY_BYTES) return answer(413, { result: null, error: "request body too large" });
  const auth = authorize({
    authorization: req.headers.get("authorization"),
    method: req.method,
    body,
    now: Date.now() / 1000,
    verifier: ctx.verifier,
    isOwnUrl: ctx.isOwnUrl,
    admins: ctx.config["management.admins"],
  });
  if ("error" in auth) return answer(401, { error: auth.error });
  let call: unknown;
  try {
    call = JSON.parse(Buffer.from(body).toString("utf8"));
  } catch {
    return answer(400, { result: null, error: "the body is not JSON" });
  }
  const { method, params = [] } = (call ?? {}) as { method?: unknown; params?: unknown };
  if (typeof method !== "string" || !Array.isArray(params))
    return answer(400, { result: null, error: 'the body must be {"method": "<name>", "params": [...]}' });
  try {
    const result = await callMethod(ctx, method, params);
    if (method !== "supportedmethods" && !method.startsWith("list"))
      log.info(`management: ${auth.pubkey} called ${method}`, { params });
    return answer(200, { result });
  } catch (e) {
    if (e instanceof MethodError) return answer(200, { result: null, error: e.message });
    return answer(500, { result: null, error: `error: ${(e as Error).message}` });
  }
}
