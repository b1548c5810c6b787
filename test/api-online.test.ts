// GET /v1/online (the URLs) and /v1/online/stats: off by default (no probes, nothing listed); on, it probes the relays named in
// stored NIP-65 lists (a second test relay, a NIP-11 stub that counts its requests, a closed
// port) and lists exactly the reachable ones, each probed once per interval; without
// online.allowPrivate, loopback addresses are never fetched.
import { describe, expect, test } from "bun:test";
import type { TestRelay } from "./harness.ts";
import { cleanup, newKey, now, RawClient, signed, startTestRelay } from "./harness.ts";

/** A NIP-11 endpoint that records the Accept header of every request it gets. */
function stub(): { url: string; accepts: string[] } {
  const accepts: string[] = [];
  const s = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      accepts.push(req.headers.get("accept") ?? "");
      return Response.json({ name: "stub" }, { headers: { "Content-Type": "application/nostr+json" } });
    },
  });
  cleanup(() => s.stop(true));
  return { url: `ws://127.0.0.1:${s.port}`, accepts };
}

/** A port nothing listens on (bound, then released). */
function closedPort(): number {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = s.port!;
  s.stop(true);
  return port;
}

async function publishRelayList(r: TestRelay, urls: string[]): Promise<void> {
  const c = await RawClient.connect(r.url);
  const list = signed(newKey(), { kind: 10002, created_at: now(), tags: urls.map((u) => ["r", u]) });
  expect((await c.publish(list))[2]).toBe(true);
  c.close();
}

interface Online {
  probing: boolean;
  window_seconds: number;
  known: number;
  probed: number;
  relays: { url: string; last_seen: number; rtt_ms: number }[];
}

const online = async (r: TestRelay): Promise<Online> =>
  (await (await fetch(`${r.url.replace("ws://", "http://")}/v1/online/stats`)).json()) as Online;

/** GET /v1/online: the URLs of the relays online, as the aggregator seed specifies. */
const onlineUrls = async (r: TestRelay): Promise<unknown> =>
  (await fetch(`${r.url.replace("ws://", "http://")}/v1/online`)).json();

async function untilProbed(r: TestRelay, n: number): Promise<Online> {
  for (let i = 0; i < 200; i++) {
    const o = await online(r);
    if (o.probed >= n) return o;
    await Bun.sleep(20);
  }
  throw new Error(`fewer than ${n} relays probed: ${JSON.stringify(await online(r))}`);
}

describe("GET /v1/online", () => {
  test("probing is off by default: nothing is fetched and nothing is listed", async () => {
    const target = stub();
    const r = startTestRelay();
    await publishRelayList(r, [target.url, "wss://relay.example.com"]);
    await Bun.sleep(100);
    expect(await online(r)).toEqual({
      probing: false,
      window_seconds: 3600,
      known: 2,
      probed: 0,
      relays: [],
    });
    expect(await onlineUrls(r)).toEqual([]);
    expect(target.accepts).toEqual([]);
  });

  test("with probing on, exactly the reachable relays are listed, each probed once per interval", async () => {
    const second = startTestRelay();
    const target = stub();
    const closed = `ws://127.0.0.1:${closedPort()}`;
    const r = startTestRelay({
      "online.probe": "true",
      "online.allowPrivate": "true",
      "online.ratePerSecond": "50",
      "online.intervalSeconds": "3600",
      "online.windowSeconds": "600",
      "online.timeoutMs": "2000",
    });
    const t = now();
    await publishRelayList(r, [second.url, target.url, closed]);
    const o = await untilProbed(r, 3);
    expect(o.probing).toBe(true);
    expect(o.window_seconds).toBe(600);
    expect(o.known).toBe(3);
    expect(o.relays.map((x) => x.url)).toEqual([second.url, target.url].sort());
    expect(await onlineUrls(r)).toEqual([second.url, target.url].sort());
    for (const x of o.relays) {
      expect(x.last_seen).toBeGreaterThanOrEqual(t);
      expect(x.last_seen).toBeLessThanOrEqual(now());
      expect(x.rtt_ms).toBeGreaterThanOrEqual(0);
    }
    // Ticks keep coming every 20 ms; none of them may probe a relay again within the interval.
    await Bun.sleep(300);
    expect(target.accepts).toEqual(["application/nostr+json"]);
    expect(r.ctx.api?.prober?.probes).toBe(3);
  });

  test("without online.allowPrivate a loopback relay is never fetched and not listed", async () => {
    const target = stub();
    const r = startTestRelay({ "online.probe": "true", "online.ratePerSecond": "50" });
    await publishRelayList(r, [target.url]);
    const o = await untilProbed(r, 1);
    expect(o.relays).toEqual([]);
    expect(target.accepts).toEqual([]);
    expect(r.ctx.api?.prober?.probes).toBe(0);
  });
});
