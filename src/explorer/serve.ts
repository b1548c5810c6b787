// The explorer at GET / for browsers: the page (relay name and NIP-11 document filled in), the
// client bundle and stylesheet under content-hashed paths, and GET /v0/stats. Serves from memory
// (embedded in the binary); reads the relay's counters and never writes anything.
import type { RelayContext } from "../context.ts";
import bundle from "./bundle.js" with { type: "text" };
import template from "./page.html" with { type: "text" };
import { readStats } from "./stats.ts";
import style from "./style.css" with { type: "text" };

interface Asset {
  path: string;
  type: string;
  body: Uint8Array;
  gzip: Uint8Array;
  etag: string;
}

function asset(name: string, type: string, text: string): Asset {
  const body = new TextEncoder().encode(text);
  const hash = Bun.hash(body).toString(36);
  const [base, ext] = name.split(".");
  return {
    path: `/explorer/${base}.${hash}.${ext}`,
    type,
    body,
    gzip: Bun.gzipSync(body, { level: 9 }),
    etag: hash,
  };
}

// Hashed paths change with the content, so the files may be cached for good.
const script = asset("app.js", "text/javascript; charset=utf-8", bundle);
const sheet = asset("style.css", "text/css; charset=utf-8", style);
const IMMUTABLE = "public, max-age=31536000, immutable";

// No inline script or style, so everything a note could smuggle into the page is refused by the
// browser too; extension schemes stay allowed for NIP-07 providers that inject a script file.
const CSP = [
  "default-src 'none'",
  "script-src 'self' chrome-extension: moz-extension: safari-web-extension:",
  "style-src 'self'",
  "img-src 'self' https: data:",
  "connect-src 'self' ws: wss:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

// The page changes only when the NIP-11 document does (a live config reload).
let page: { key: string; asset: Asset } | undefined;

function pageAsset(doc: Record<string, unknown>): Asset {
  const info = JSON.stringify(doc);
  if (page?.key === info) return page.asset;
  const fill: Record<string, string> = {
    name: escapeHtml(String(doc.name)),
    description: escapeHtml(String(doc.description)),
    info: escapeHtml(info),
    script: script.path,
    style: sheet.path,
  };
  const html = (template as unknown as string).replace(/\{\{(\w+)\}\}/g, (_, k: string) => fill[k] ?? "");
  page = { key: info, asset: asset("index.html", "text/html; charset=utf-8", html) };
  return page.asset;
}

function send(req: Request, a: Asset, headers: Record<string, string>): Response {
  const gzip = /\bgzip\b/.test(req.headers.get("accept-encoding") ?? "");
  // Each encoding is its own representation, with its own validator.
  const etag = `"${a.etag}${gzip ? "-gz" : ""}"`;
  const h: Record<string, string> = { ...headers, "Content-Type": a.type, ETag: etag };
  h.Vary = h.Vary ? `${h.Vary}, Accept-Encoding` : "Accept-Encoding";
  const tags = req.headers.get("if-none-match");
  if (tags && (tags.trim() === "*" || tags.split(",").some((t) => t.trim().replace(/^W\//, "") === etag)))
    return new Response(null, { status: 304, headers: h });
  if (gzip) h["Content-Encoding"] = "gzip";
  const body = gzip ? a.gzip : a.body;
  // HEAD (the body dropped by http.ts) carries what GET would, its Content-Length included.
  h["Content-Length"] = `${typeof body === "string" ? Buffer.byteLength(body) : body.byteLength}`;
  return new Response(body, { headers: h });
}

/** GET / for anything but a NIP-11 request; `doc` is the relay's NIP-11 document (server/nip11.ts). */
export function explorerPage(req: Request, doc: Record<string, unknown>): Response {
  return send(req, pageAsset(doc), {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    // The same URL answers NIP-11 to Accept: application/nostr+json.
    Vary: "Accept",
  });
}

/** GET /v0/stats: the page's numbers, never cached. */
export const explorerStats = (ctx: RelayContext): Response =>
  new Response(JSON.stringify(readStats(ctx)), {
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store" },
  });

/** The page's two files under their content-hashed paths, cached for good. */
export const explorerFiles: readonly { path: string; serve: (req: Request) => Response }[] = [
  script,
  sheet,
].map((a) => ({
  path: a.path,
  serve: (req: Request) => send(req, a, { "Cache-Control": IMMUTABLE, "X-Content-Type-Options": "nosniff" }),
}));
