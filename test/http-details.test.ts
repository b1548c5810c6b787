// What caches, proxies and HTTP clients rely on: Vary on content negotiation, HEAD carrying a
// GET's headers on every route of the table, one answer for OPTIONS, unknown paths and other
// methods, and gzip for API JSON above a small size.
import { beforeAll, describe, expect, test } from "bun:test";
import { getPublicKey } from "nostr-tools/pure";
import { handleHttp } from "../src/server/http.ts";
import type { Route } from "../src/server/routes.ts";
import { ROUTES } from "../src/server/routes.ts";
import { newKey, RawClient, signed, startTestRelay } from "./harness.ts";

const relay = startTestRelay({ "info.name": "details" });
const base = relay.url.replace("ws://", "http://");

/** The headers of an answer, minus the one that changes with each request. */
const headersOf = (r: Response) => {
  const h = Object.fromEntries(r.headers.entries());
  delete h.date;
  return h;
};

const get = (path: string, headers: Record<string, string>, method = "GET") =>
  fetch(`${base}${path}`, { method, headers, decompress: false });

describe("the relay's own URL", () => {
  for (const accept of ["application/nostr+json", "text/html"]) {
    test(`HEAD / with Accept: ${accept} carries the headers GET does, Vary: Accept among them`, async () => {
      for (const encoding of ["identity", "gzip"]) {
        const headers = { Accept: accept, "Accept-Encoding": encoding };
        const g = await get("/", headers);
        const body = new Uint8Array(await g.arrayBuffer());
        const h = await get("/", headers, "HEAD");
        expect(await h.text()).toBe("");
        expect(headersOf(h)).toEqual(headersOf(g));
        expect(g.headers.get("vary")?.split(/,\s*/)).toContain("Accept");
        expect(Number(g.headers.get("content-length"))).toBe(body.byteLength);
      }
    });
  }
});

describe("API JSON", () => {
  let pubkey: string;
  beforeAll(async () => {
    const sk = newKey();
    pubkey = getPublicKey(sk);
    const c = await RawClient.connect(relay.url);
    // A profile long enough for its API answer to be compressed.
    const about = "an operator who writes long profiles ".repeat(60);
    const meta = signed(sk, { kind: 0, content: JSON.stringify({ name: "long", about }) });
    expect((await c.publish(meta))[2]).toBe(true);
    c.close();
  });

  test("is gzipped for a client that accepts gzip, with its own ETag and Vary: Accept-Encoding", async () => {
    const plain = await get(`/v0/p/${pubkey}`, { "Accept-Encoding": "identity" });
    const text = await plain.text();
    expect(text.length).toBeGreaterThan(1024);
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("vary")).toBe("Accept-Encoding");

    const zipped = await get(`/v0/p/${pubkey}`, { "Accept-Encoding": "gzip, br" });
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect(zipped.headers.get("vary")).toBe("Accept-Encoding");
    const bytes = new Uint8Array(await zipped.arrayBuffer());
    expect(new TextDecoder().decode(Bun.gunzipSync(bytes))).toBe(text);
    expect(bytes.byteLength).toBeLessThan(text.length);
    expect(zipped.headers.get("etag")).not.toBe(plain.headers.get("etag"));

    const head = await get(`/v0/p/${pubkey}`, { "Accept-Encoding": "gzip" }, "HEAD");
    expect(headersOf(head)).toEqual(headersOf(zipped));
    const again = await get(`/v0/p/${pubkey}`, {
      "Accept-Encoding": "gzip",
      "If-None-Match": zipped.headers.get("etag")!,
    });
    expect(again.status).toBe(304);
  });

  test("small answers go uncompressed even to a client that accepts gzip", async () => {
    const r = await get("/v1/online", { "Accept-Encoding": "gzip" });
    expect(r.headers.get("content-encoding")).toBeNull();
    expect(r.headers.get("vary")).toBe("Accept-Encoding");
    expect(await r.text()).toBe("[]");
  });
});

describe("every route of the table (src/server/routes.ts)", () => {
  /** a path each prefix route answers */
  const UNDER: Record<string, string> = { "/v0/": "/v0/trending/notes", "/v1/": "/v1/online" };
  const pathOf = (r: (typeof ROUTES)[number]) => {
    const p = typeof r.path === "string" ? r.path : r.path(relay.ctx.config);
    return r.prefix ? UNDER[p]! : p;
  };
  const accept = (r: (typeof ROUTES)[number]) =>
    r.when && pathOf(r) === "/" ? { Accept: "application/nostr+json" } : { Accept: "text/html" };

  test("a GET route answers 200 with CORS, and HEAD carries the same headers and no body", async () => {
    const gets = ROUTES.filter((r) => r.method === "GET");
    expect(gets.length).toBe(ROUTES.length - 1);
    for (const r of gets) {
      const headers = { ...accept(r), "Accept-Encoding": "gzip" };
      const g = await get(pathOf(r), headers);
      await g.arrayBuffer();
      expect([pathOf(r), g.status]).toEqual([pathOf(r), 200]);
      expect(g.headers.get("access-control-allow-origin")).toBe("*");
      const h = await get(pathOf(r), headers, "HEAD");
      expect(await h.text()).toBe("");
      // Counters and uptime may change an answer's length between the two requests.
      const live = pathOf(r) === "/v0/stats" || pathOf(r) === relay.ctx.config["metrics.path"];
      const [gh, hh] = [headersOf(g), headersOf(h)];
      if (live) {
        expect(Number(hh["content-length"])).toBeGreaterThan(0);
        delete gh["content-length"];
        delete hh["content-length"];
      }
      expect([pathOf(r), hh]).toEqual([pathOf(r), gh]);
    }
  });

  test("HEAD of a route that sets no Content-Length gets the length of the GET body", async () => {
    const body = "twelve bytes";
    const routes: Route[] = [{ method: "GET", path: "/plain", handle: () => new Response(body) }];
    const req = (method: string) => new Request(`${base}/plain`, { method });
    const g = await handleHttp(req("GET"), relay.ctx, routes);
    expect(await g.text()).toBe(body);
    const h = await handleHttp(req("HEAD"), relay.ctx, routes);
    expect(h.body).toBeNull();
    expect(h.headers.get("content-length")).toBe("12");
    expect(h.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("OPTIONS is a 204 preflight on any path; another method is 405; an unknown path is 404", async () => {
    for (const path of ["/", "/v0/stats", "/nowhere"]) {
      const o = await get(path, {}, "OPTIONS");
      expect(o.status).toBe(204);
      expect(o.headers.get("access-control-allow-methods")).toBe("GET, HEAD, POST, OPTIONS");
    }
    for (const [method, path] of [
      ["POST", "/"],
      ["PUT", "/"],
      ["DELETE", "/v0/stats"],
      ["POST", "/nowhere"],
    ] as const) {
      const r = await get(path, {}, method);
      expect([method, path, r.status, r.headers.get("allow")]).toEqual([
        method,
        path,
        405,
        "GET, HEAD, OPTIONS",
      ]);
      expect(await r.text()).toBe("method not allowed\n");
    }
    const missing = await get("/nowhere", {});
    expect(missing.status).toBe(404);
    expect(missing.headers.get("access-control-allow-origin")).toBe("*");
    expect(await missing.text()).toBe("not found\n");
  });
});
