// Every HTTP route on the relay's port, tried in order: the first whose method, path and
// condition match answers. GET routes answer HEAD too; http.ts drops the body, adds CORS and
// answers OPTIONS, 404 and 405 for all of them. WebSocket upgrades never get here (server.ts).
import { handleApi } from "../api/routes.ts";
import type { Config } from "../config/schema.ts";
import type { RelayContext } from "../context.ts";
import { explorerFiles, explorerPage, explorerStats } from "../explorer/serve.ts";
import { handleManagement, isManagementCall } from "../manage/rpc.ts";
import { renderMetrics } from "./metrics.ts";
import { nip05Document } from "./nip05.ts";
import { relayInfo } from "./nip11.ts";

export interface Route {
  method: "GET" | "POST";
  /** the exact path (or, with `prefix`, what a path starts with); read from the config per request */
  path: string | ((c: Config) => string);
  prefix?: boolean;
  /** a further condition: a header, a setting */
  when?: (req: Request, c: Config) => boolean;
  handle: (req: Request, url: URL, ctx: RelayContext) => Response | Promise<Response>;
}

/** A 200 answer with its Content-Length (which HEAD keeps). */
const reply = (body: string, type: string, extra: Record<string, string> = {}): Response =>
  new Response(body, {
    headers: { "Content-Type": type, "Content-Length": `${Buffer.byteLength(body)}`, ...extra },
  });

const wantsNip11 = (req: Request): boolean =>
  (req.headers.get("accept") ?? "").includes("application/nostr+json");

export const ROUTES: readonly Route[] = [
  // One URL, two representations chosen by Accept: caches must key on it (Vary: Accept on both).
  {
    method: "GET",
    path: "/",
    when: wantsNip11,
    handle: (_req, _url, ctx) =>
      reply(JSON.stringify(relayInfo(ctx.config, ctx.moderation)), "application/nostr+json", {
        Vary: "Accept",
      }),
  },
  {
    method: "GET",
    path: "/",
    handle: (req, _url, ctx) => explorerPage(req, relayInfo(ctx.config, ctx.moderation)),
  },
  // NIP-86 management calls: POST / with their content type (src/manage/).
  {
    method: "POST",
    path: "/",
    when: isManagementCall,
    handle: (req, _url, ctx) => handleManagement(req, ctx),
  },
  ...explorerFiles.map((f): Route => ({ method: "GET", path: f.path, handle: (req) => f.serve(req) })),
  { method: "GET", path: "/v0/stats", handle: (_req, _url, ctx) => explorerStats(ctx) },
  { method: "GET", path: "/v0/", prefix: true, handle: handleApi },
  { method: "GET", path: "/v1/", prefix: true, handle: handleApi },
  {
    method: "GET",
    path: "/.well-known/nostr.json",
    handle: (_req, url, ctx) =>
      reply(JSON.stringify(nip05Document(ctx.config, url.searchParams.get("name"))), "application/json"),
  },
  // /metrics on the relay's port unless metrics.port gives it a listener of its own.
  {
    method: "GET",
    path: (c) => c["metrics.path"],
    when: (_req, c) => c["metrics.enabled"] && c["metrics.port"] === 0,
    handle: (_req, _url, ctx) => reply(renderMetrics(ctx), "text/plain; version=0.0.4; charset=utf-8"),
  },
];
