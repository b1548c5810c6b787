// HTTP on the relay's port: NIP-11 for `Accept: application/nostr+json`, a small HTML page
// otherwise, NIP-05 names, /metrics, CORS on every answer and preflight. WebSocket upgrades
// are handled in server.ts.
import type { Config } from "../config/schema.ts";
import type { RelayContext } from "../ingest/context.ts";
import { renderMetrics } from "./metrics.ts";
import { nip05Document } from "./nip05.ts";
import { relayInfo } from "./nip11.ts";

const corsHeaders = (c: Config): Record<string, string> =>
  c["http.cors"]
    ? {
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Allow-Headers": "*",
        "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
      }
    : {};

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

function page(c: Config): string {
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(c["info.name"])}</title></head>
<body><h1>${escapeHtml(c["info.name"])}</h1><p>${escapeHtml(c["info.description"])}</p>
<p>This is a Nostr relay. Connect with a Nostr client over WebSocket at this address.</p></body></html>`;
}

export function handleHttp(req: Request, ctx: RelayContext): Response {
  const c = ctx.config;
  const url = new URL(req.url);
  const cors = corsHeaders(c);
  if (req.method === "OPTIONS") return new Response(null, { status: 204, headers: cors });
  if (req.method !== "GET" && req.method !== "HEAD")
    return new Response("method not allowed\n", {
      status: 405,
      headers: { ...cors, Allow: "GET, HEAD, OPTIONS" },
    });
  const reply = (body: string, type: string, extra: Record<string, string> = {}) =>
    new Response(req.method === "HEAD" ? null : body, {
      status: 200,
      headers: { ...cors, "Content-Type": type, ...extra },
    });
  if (url.pathname === "/") {
    const wantsInfo = (req.headers.get("accept") ?? "").includes("application/nostr+json");
    return wantsInfo
      ? reply(JSON.stringify(relayInfo(c)), "application/nostr+json")
      : reply(page(c), "text/html; charset=utf-8");
  }
  if (url.pathname === "/.well-known/nostr.json")
    return reply(JSON.stringify(nip05Document(c, url.searchParams.get("name"))), "application/json");
  if (c["metrics.enabled"] && c["metrics.port"] === 0 && url.pathname === c["metrics.path"])
    return reply(renderMetrics(ctx), "text/plain; version=0.0.4; charset=utf-8");
  return new Response("not found\n", { status: 404, headers: cors });
}
