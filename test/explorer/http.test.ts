// The explorer over HTTP: the committed bundle matches its sources, the page and its files are
// served with validators, compression and a strict CSP, NIP-11 is unchanged, and /v0/stats counts.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BUNDLE_PATH, buildExplorerBundle } from "../../scripts/explorer-bundle.ts";
import type { RelayContext } from "../../src/context.ts";
import { readStats } from "../../src/explorer/stats.ts";
import { newKey, RawClient, signed, startTestRelay } from "../harness.ts";

const ROOT = join(import.meta.dir, "..", "..");

const relay = startTestRelay({
  "info.name": "Harbour <b>&</b> relay",
  "info.description": "a 'quoted' \"desc\"",
});
const base = relay.url.replace("ws://", "http://");

const assetPaths = (html: string) =>
  [...html.matchAll(/(?:href|src)="(\/explorer\/[^"]+)"/g)].map((m) => m[1]!);

describe("the committed client", () => {
  test("src/explorer/bundle.js matches a fresh build (run bun scripts/explorer-bundle.ts)", async () => {
    expect(readFileSync(BUNDLE_PATH, "utf8")).toBe(await buildExplorerBundle());
  });

  test("the client type-checks against the DOM library (its own tsconfig)", () => {
    const r = Bun.spawnSync({
      cmd: [join(ROOT, "node_modules", ".bin", "tsc"), "--noEmit", "-p", "src/explorer/client"],
      cwd: ROOT,
    });
    expect(r.stdout.toString() + r.stderr.toString()).toBe("");
    expect(r.exitCode).toBe(0);
  });
});

describe("GET / for a browser", () => {
  test("is the explorer page, the name escaped, with a CSP that allows no inline code", async () => {
    const r = await fetch(`${base}/`, { headers: { Accept: "text/html" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = r.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(r.headers.get("vary")).toBe("Accept, Accept-Encoding");
    expect(r.headers.get("cache-control")).toBe("no-cache");
    const html = await r.text();
    expect(html).toContain("<h1>Harbour &#60;b&#62;&#38;&#60;/b&#62; relay</h1>");
    expect(html).toContain("a &#39;quoted&#39; &#34;desc&#34;");
    expect(html).not.toContain("<b>");
    expect(html).not.toMatch(/<script>|<style>| on\w+=/);
    // The NIP-11 document rides along for the client, HTML-escaped in an attribute.
    const meta = /<meta name="relay-info" content="([^"]*)">/.exec(html)?.[1] ?? "";
    const decoded = meta.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));
    expect(JSON.parse(decoded).name).toBe("Harbour <b>&</b> relay");
    expect(assetPaths(html)).toHaveLength(2);
  });

  test("answers 304 to its ETag, and gzip to a client that accepts it", async () => {
    const first = await fetch(`${base}/`, { headers: { "Accept-Encoding": "identity" } });
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9a-z]+"$/);
    const again = await fetch(`${base}/`, {
      headers: { "If-None-Match": etag, "Accept-Encoding": "identity" },
    });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    const raw = await fetch(`${base}/`, { headers: { "Accept-Encoding": "gzip" }, decompress: false });
    expect(raw.headers.get("content-encoding")).toBe("gzip");
    expect(raw.headers.get("etag")).toBe(etag.replace(/"$/, '-gz"'));
    const body = new Uint8Array(await raw.arrayBuffer());
    expect(new TextDecoder().decode(Bun.gunzipSync(body))).toBe(await first.text());
  });

  test("HEAD / answers the headers with no body", async () => {
    const r = await fetch(`${base}/`, { method: "HEAD" });
    expect(r.status).toBe(200);
    expect(r.headers.get("etag")).toBeTruthy();
    expect(await r.text()).toBe("");
  });

  test("NIP-11 is still answered to Accept: application/nostr+json", async () => {
    const r = await fetch(`${base}/`, { headers: { Accept: "application/nostr+json" } });
    expect(r.headers.get("content-type")).toBe("application/nostr+json");
    expect(r.headers.get("etag")).toBeNull();
    expect(((await r.json()) as { name: string }).name).toBe("Harbour <b>&</b> relay");
  });

  test("the script and stylesheet are served under content-hashed, immutable paths", async () => {
    const html = await (await fetch(`${base}/`)).text();
    const [script, style] = assetPaths(html).sort();
    expect(script).toMatch(/^\/explorer\/app\.[0-9a-z]+\.js$/);
    const js = await fetch(`${base}${script}`);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await js.text()).toBe(readFileSync(BUNDLE_PATH, "utf8"));
    const css = await fetch(`${base}${style}`);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await css.text()).toBe(readFileSync(join(ROOT, "src", "explorer", "style.css"), "utf8"));
    expect((await fetch(`${base}/explorer/app.0000.js`)).status).toBe(404);
  });
});

describe("GET /v0/stats", () => {
  test("counts stored events and open connections", async () => {
    const before = (await (await fetch(`${base}/v0/stats`)).json()) as Record<string, number>;
    expect(before).toMatchObject({ connections: 0, events: 0, accepted: 0 });
    const c = await RawClient.connect(relay.url);
    const sk = newKey();
    for (let i = 0; i < 3; i++) expect((await c.publish(signed(sk, { content: `n${i}` })))[2]).toBe(true);
    const r = await fetch(`${base}/v0/stats`);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    const after = (await r.json()) as Record<string, number>;
    expect(after).toMatchObject({ connections: 1, events: 3, accepted: 3 });
    expect(after.events_per_second).toBeGreaterThan(0);
    expect(typeof after.uptime_seconds).toBe("number");
    c.close();
  });

  test("the rate is measured over the last minute of samples", () => {
    const t0 = 1_000_000;
    const ctx = {
      counters: { eventsAccepted: 0 },
      startedAt: t0,
      store: { events: { getStats: () => ({ entryCount: 7 }) } },
      conns: new Set(),
      live: { size: 2 },
    } as unknown as RelayContext;
    expect(readStats(ctx, t0 + 10_000)).toMatchObject({ events: 7, subscriptions: 2, events_per_second: 0 });
    ctx.counters.eventsAccepted = 600;
    // 600 events in the 60 s since the last sample.
    expect(readStats(ctx, t0 + 70_000)).toMatchObject({ events_per_second: 10, rate_window_seconds: 60 });
    // A quiet minute later the window has moved past the burst.
    expect(readStats(ctx, t0 + 135_000)).toMatchObject({ events_per_second: 0, rate_window_seconds: 65 });
  });
});
