// HTTP on the relay port: NIP-11 document with CORS, preflight, HEAD, the HTML page, and
// nostr-tools' own NIP-11 fetcher reading it.
import { describe, expect, test } from "bun:test";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { startTestRelay } from "./harness.ts";

const relay = startTestRelay({ "info.name": "test relay", "info.contact": "mailto:op@example.org" });
const base = relay.url.replace("ws://", "http://");

describe("NIP-11", () => {
  test("GET / with Accept: application/nostr+json returns the information document", async () => {
    const r = await fetch(`${base}/`, { headers: { Accept: "application/nostr+json" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/nostr+json");
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("access-control-allow-headers")).toBe("Authorization, *");
    expect(r.headers.get("access-control-allow-methods")).toContain("GET");
    const doc = (await r.json()) as Record<string, unknown>;
    expect(doc.name).toBe("test relay");
    expect(doc.contact).toBe("mailto:op@example.org");
    expect(doc.supported_nips).toEqual([1, 9, 11, 40, 42, 45, 50, 62, 70, 77]);
    expect(doc.software).toBe("bunstr-relay");
    expect(typeof doc.version).toBe("string");
    expect(doc.limitation).toMatchObject({
      max_message_length: 131072,
      max_subscriptions: 50,
      max_limit: 5000,
      default_limit: 500,
      max_subid_length: 64,
      auth_required: false,
      payment_required: false,
      created_at_upper_limit: 900,
    });
  });

  test("nostr-tools' fetchRelayInformation reads it", async () => {
    const { fetchRelayInformation } = await import("nostr-tools/nip11");
    const info = await fetchRelayInformation(relay.url);
    expect(info.name).toBe("test relay");
  });

  test("OPTIONS preflight answers 204 with CORS headers", async () => {
    const r = await fetch(`${base}/`, { method: "OPTIONS" });
    expect(r.status).toBe(204);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("HEAD / answers 200 with no body", async () => {
    const r = await fetch(`${base}/`, { method: "HEAD" });
    expect(r.status).toBe(200);
    expect(await r.text()).toBe("");
  });

  test("GET / from a browser gets a small HTML page naming the relay", async () => {
    const r = await fetch(`${base}/`, { headers: { Accept: "text/html" } });
    expect(r.headers.get("content-type")).toStartWith("text/html");
    expect(await r.text()).toContain("<h1>test relay</h1>");
  });

  test("unknown paths are 404", async () => {
    expect((await fetch(`${base}/nope`)).status).toBe(404);
  });
});

describe("NIP-05 and metrics", () => {
  test("/.well-known/nostr.json answers configured names and relay hints with CORS", async () => {
    const pk = "a".repeat(64);
    const r = startTestRelay({
      "nip05.names": JSON.stringify({ alice: pk, bob: "b".repeat(64) }),
      "nip05.relays": JSON.stringify({ [pk]: ["wss://relay.example.com"] }),
    });
    const http = r.url.replace("ws://", "http://");
    const res = await fetch(`${http}/.well-known/nostr.json?name=alice`);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(await res.json()).toEqual({ names: { alice: pk }, relays: { [pk]: ["wss://relay.example.com"] } });
    expect(await (await fetch(`${http}/.well-known/nostr.json?name=carol`)).json()).toEqual({ names: {} });
    await r.destroy();
  });

  test("/metrics is Prometheus text that a standard parser reads, with the counters moving", async () => {
    const { RawClient, newKey, signed } = await import("./harness.ts");
    const c = await RawClient.connect(relay.url);
    await c.publish(signed(newKey()));
    await c.req("m", { kinds: [1] });
    const text = await (await fetch(`${base}/metrics`)).text();
    const samples = parsePrometheus(text);
    expect(samples.get("relay_connections")).toBeGreaterThanOrEqual(1);
    expect(samples.get('relay_frames_in_total{verb="EVENT"}')).toBeGreaterThanOrEqual(1);
    expect(samples.get('relay_frames_out_total{verb="EOSE"}')).toBeGreaterThanOrEqual(1);
    expect(samples.get('relay_events_accepted_by_kind_total{kind="1"}')).toBeGreaterThanOrEqual(1);
    expect(samples.get('relay_queries_total{index="kind"}')).toBeGreaterThanOrEqual(1);
    expect(samples.get("relay_stored_events")).toBeGreaterThanOrEqual(1);
    // Nothing is being written now: no read waits for its turn.
    expect(samples.get("relay_reads_waiting")).toBe(0);
    expect(samples.get("relay_reads_deferred_total")).toBe(0);
    expect(samples.get("process_resident_memory_bytes")).toBeGreaterThan(0);
    // Where the anonymous memory is: the kernel's count and both allocators' (Linux, glibc).
    const anon = samples.get("process_anonymous_memory_bytes")!;
    const runtime = samples.get('relay_allocated_bytes{allocator="runtime"}')!;
    const libc = samples.get('relay_allocated_bytes{allocator="libc"}');
    expect(anon).toBeGreaterThan(0);
    expect(runtime).toBeGreaterThan(0);
    // LMDB's environments and write transactions allocate with malloc; glibc's count is read on
    // x64 only (src/server/memory.ts says why).
    if (process.arch === "x64") expect(libc).toBeGreaterThan(0);
    else expect(libc).toBeUndefined();
    c.close();
  });

  test("/metrics shows how far behind the log each derived index is, in events and seconds", async () => {
    const { RawClient, newKey, signed } = await import("./harness.ts");
    // Batches applied only every 10 minutes: what is committed stays behind.
    const lazy = startTestRelay({
      "consumers.intervalMs": "600000",
      "consumers.maxBatch": "1000000",
      "consumers.idleMs": "0",
    });
    const c = await RawClient.connect(lazy.url);
    const sk = newKey();
    for (const content of ["one", "two", "three"])
      expect((await c.publish(signed(sk, { content })))[2]).toBe(true);
    await Bun.sleep(20);
    const behind = parsePrometheus(
      await (await fetch(`${lazy.url.replace("ws://", "http://")}/metrics`)).text(),
    );
    for (const consumer of ["indexes", "search", "counters"]) {
      expect([consumer, behind.get(`relay_consumer_lag_events{consumer="${consumer}"}`)]).toEqual([
        consumer,
        3,
      ]);
      expect(behind.get(`relay_consumer_lag_seconds{consumer="${consumer}"}`)).toBeGreaterThan(0);
      expect(behind.get(`relay_consumer_watermark{consumer="${consumer}"}`)).toBe(0);
    }
    c.close();
    await lazy.destroy();
    // Still every 10 minutes, but also once writes pause for 20 ms: caught up soon after.
    const eager = startTestRelay({ "consumers.intervalMs": "600000", "consumers.idleMs": "20" });
    const c2 = await RawClient.connect(eager.url);
    for (const content of ["one", "two", "three"])
      expect((await c2.publish(signed(sk, { content })))[2]).toBe(true);
    const url = `${eager.url.replace("ws://", "http://")}/metrics`;
    let now = parsePrometheus(await (await fetch(url)).text());
    for (let i = 0; i < 100 && now.get('relay_consumer_lag_events{consumer="search"}') !== 0; i++) {
      await Bun.sleep(20);
      now = parsePrometheus(await (await fetch(url)).text());
    }
    for (const consumer of ["indexes", "search", "counters"]) {
      expect(now.get(`relay_consumer_lag_events{consumer="${consumer}"}`)).toBe(0);
      expect(now.get(`relay_consumer_lag_seconds{consumer="${consumer}"}`)).toBe(0);
      expect(now.get(`relay_consumer_watermark{consumer="${consumer}"}`)).toBe(3);
      expect(now.get(`relay_consumer_batches_total{consumer="${consumer}"}`)).toBeGreaterThanOrEqual(1);
    }
    c2.close();
    await eager.destroy();
  });
});

/** Sample values by `name{label="value"}`, as read by a standard Prometheus text-format parser. */
function parsePrometheus(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const family of parsePrometheusTextFormat(text)) {
    expect(["COUNTER", "GAUGE"]).toContain(family.type);
    expect(family.help.length).toBeGreaterThan(0);
    for (const m of family.metrics) {
      const labels = Object.entries(m.labels ?? {})
        .map(([k, v]) => `${k}="${v}"`)
        .join(",");
      const value = Number(m.value);
      expect(Number.isNaN(value)).toBe(false);
      out.set(`${family.name}${labels ? `{${labels}}` : ""}`, value);
    }
  }
  return out;
}

describe("metrics on their own listener", () => {
  test("with metrics.port set, /metrics moves there and the relay port no longer serves it", async () => {
    const probe = Bun.serve({ port: 0, fetch: () => new Response() });
    const port = probe.port;
    probe.stop(true);
    const r = startTestRelay({ "metrics.port": String(port) });
    const relayHttp = r.url.replace("ws://", "http://");
    expect((await fetch(`${relayHttp}/metrics`)).status).toBe(404);
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("relay_connections ");
    await r.destroy();
  });
});
