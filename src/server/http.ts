// HTTP on the relay's port, dispatched through the route table (routes.ts). What every route
// shares is done here once: OPTIONS preflights, CORS headers on every answer, HEAD as a GET
// without its body, 404 for an unknown path and 405 for another method.
import type { Config } from "../config/schema.ts";
import type { RelayContext } from "../context.ts";
import type { Route } from "./routes.ts";
import { ROUTES } from "./routes.ts";

const corsHeaders = (c: Config): Record<string, string> =>
  c["http.cors"]
    ? {
        "Access-Control-Allow-Origin": "*",
        // `*` does not cover Authorization, which NIP-86 calls from web clients carry.
        "Access-Control-Allow-Headers": "Authorization, *",
        "Access-Control-Allow-Methods": "GET, HEAD, POST, OPTIONS",
      }
    : {};

function matches(r: Route, method: string, path: string, req: Request, c: Config): boolean {
  if (r.method !== method) return false;
  const p = typeof r.path === "string" ? r.path : r.path(c);
  if (r.prefix ? !path.startsWith(p) : path !== p) return false;
  return r.when === undefined || r.when(req, c);
}

export async function handleHttp(
  req: Request,
  ctx: RelayContext,
  routes: readonly Route[] = ROUTES,
): Promise<Response> {
  const c = ctx.config;
  const url = new URL(req.url);
  const cors = corsHeaders(c);
  if (req.method === "OPTIONS") return new Response(null, { status: 204, headers: cors });
  const head = req.method === "HEAD";
  const method = head ? "GET" : req.method;
  const route = routes.find((r) => matches(r, method, url.pathname, req, c));
  if (!route)
    return method === "GET"
      ? new Response("not found\n", { status: 404, headers: cors })
      : new Response("method not allowed\n", {
          status: 405,
          headers: { ...cors, Allow: "GET, HEAD, OPTIONS" },
        });
  const res = await route.handle(req, url, ctx);
  for (const [k, v] of Object.entries(cors)) res.headers.set(k, v);
  // Cross-origin scripts may read a validator to revalidate with (the API's, the explorer's files).
  if ("Access-Control-Allow-Origin" in cors && res.headers.has("ETag"))
    res.headers.set("Access-Control-Expose-Headers", "ETag");
  if (!head) return res;
  // HEAD carries what GET would, its Content-Length included (measured here when a route did not
  // set it: Bun would otherwise say 0).
  if (!res.headers.has("Content-Length") && res.body !== null)
    res.headers.set("Content-Length", `${(await res.arrayBuffer()).byteLength}`);
  return new Response(null, { status: res.status, headers: res.headers });
}
