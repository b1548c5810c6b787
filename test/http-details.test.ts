// What caches, proxies and HTTP clients rely on: Vary on content negotiation, HEAD carrying a
// GET's headers, and gzip for API JSON above a small size.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getPublicKey } from "nostr-tools/pure";
import type { TestRelay } from "./harness.ts";
import { newKey, RawClient, signed, startTestRelay } from "./harness.ts";

let relay: TestRelay;
let base: string;
beforeAll(() => {
  relay = startTestRelay({ "info.name": "details" });
  base = relay.url.replace("ws://", "http://");
});
afterAll(() => relay.destroy());

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
