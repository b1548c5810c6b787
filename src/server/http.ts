// HTTP on the relay's port: NIP-11 for `Accept: application/nostr+json`, the explorer page
// otherwise (src/explorer/, with its files and /v0/stats), NIP-86 management calls (src/manage/),
// NIP-05 names, /metrics, CORS on every answer and preflight. WebSocket upgrades are handled in server.ts.
import { handleApi } from "../api/routes.ts";
import type { Config } from "../config/schema.ts";
import type { RelayContext } from "../context.ts";
import { explorerPage, explorerRoute } from "../explorer/serve.ts";
import { handleManagement, isManagementCall } from "../manage/rpc.ts";
import { renderMetrics } from "./metrics.ts";
import { nip05Document } from "./nip05.ts";
import { relayInfo } from "./nip11.ts";

const corsHeaders = (c: Config): Record<string, string> =>
  c["http.cors"]
    ? {
        "Access-Control-Allow-Origin": "*",
        // `*` does not cover Authorization, which NIP-86 calls from web clients carry.
        "Access-Control-Allow-Headers": "Authorization, *",
        "Access-Control-Allow-Methods": "GET, HEAD, POST, OPTIONS",
      }
    : {};

export function handleHttp(req: Request, ctx: RelayContext): Response | Promise<Response> {
  const c = ctx.config;
  const url = new URL(req.url);
  const cors = corsHeaders(c);
  if (req.method === "OPTIONS") return new Response(null, { status: 204, headers: cors });
  if (url.pathname === "/" && isManagementCall(req)) return handleManagement(req, ctx, cors);
  if (req.method !== "GET" && req.method !== "HEAD")
    return new Response("method not allowed\n", {
      status: 405,
      headers: { ...cors, Allow: "GET, HEAD, OPTIONS" },
    });
  // HEAD carries what GET would, its Content-Length included.
  const reply = (body: string, type: string, extra: Record<string, string> = {}) =>
    new Response(req.method === "HEAD" ? null : body, {
      status: 200,
      headers: { ...cors, "Content-Type": type, "Content-Length": `${Buffer.byteLength(body)}`, ...extra },
    });
  if (url.pathname === "/") {
    const wantsInfo = (req.headers.get("accept") ?? "").includes("application/nostr+json");
    // One URL, two representations chosen by Accept: caches must key on it.
    return wantsInfo
      ? reply(JSON.stringify(relayInfo(c, ctx.moderation)), "application/nostr+json", { Vary: "Accept" })
      : explorerPage(req, relayInfo(c, ctx.moderation), cors);
  }
  const explorer = explorerRoute(req, url.pathname, ctx, cors);
  if (explorer) return explorer;
  if (/^\/v[01]\//.test(url.pathname) && url.pathname !== "/v0/stats") return handleApi(req, url, ctx, cors);
  if (url.pathname === "/.well-known/nostr.json")
    return reply(JSON.stringify(nip05Document(c, url.searchParams.get("name"))), "application/json");
  if (c["metrics.enabled"] && c["metrics.port"] === 0 && url.pathname === c["metrics.path"])
    return reply(renderMetrics(ctx), "text/plain; version=0.0.4; charset=utf-8");
  return new Response("not found\n", { status: 404, headers: cors });
}
