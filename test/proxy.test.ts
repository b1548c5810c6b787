// The client's address behind a reverse proxy: http.realIpHeader is believed only from peers in
// http.trustedProxies, and every per-IP limit and the write-policy plugin see the address it
// resolves to. The test connects from 127.0.0.1, a trusted proxy by default.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TestRelay } from "./harness.ts";
import { cleanup, newKey, RawClient, signed, startTestRelay, tempDir } from "./harness.ts";

/** Opens a WebSocket with these upgrade headers; "refused" when the relay will not have it. */
async function open(r: TestRelay, headers: Record<string, string> = {}): Promise<RawClient | "refused"> {
  // A bare upgrade request first: its status says whether a real one would be admitted
  // (429 when the address is over its cap; 400 for this keyless request otherwise).
  const res = await fetch(r.url.replace("ws", "http"), {
    headers: { Upgrade: "websocket", Connection: "Upgrade", ...headers },
  });
  await res.arrayBuffer();
  if (res.status === 429) return "refused";
  expect(res.status).toBe(400);
  const c = await RawClient.connect(r.url, headers);
  cleanup(() => c.close());
  return c;
}

async function outcomes(c: RawClient, n: number): Promise<string[]> {
  const sk = newKey();
  const events = Array.from({ length: n }, (_, i) => signed(sk, { content: `${i}` }));
  const from = c.frames.length;
  for (const e of events) c.send(["EVENT", e]);
  const oks = await Promise.all(events.map((e) => c.ok(e.id, from)));
  return oks.map((f) => (f[2] ? "ok" : String(f[3])));
}

const xff = (v: string) => ({ "X-Forwarded-For": v });

describe("the client address behind a trusted proxy", () => {
  test("the connection cap counts the forwarded address, the right-most one not a proxy", async () => {
    const r = startTestRelay({ "http.realIpHeader": "X-Forwarded-For", "rate.maxConnectionsPerIp": "1" });
    const kinds = async (h: Record<string, string>) =>
      (await open(r, h)) === "refused" ? "refused" : "open";
    expect(await kinds(xff("203.0.113.7"))).toBe("open");
    expect(await kinds(xff("203.0.113.7"))).toBe("refused");
    expect(await kinds(xff("203.0.113.8"))).toBe("open");
    // A client may write anything on the left; the proxy appended the address it saw.
    expect(await kinds(xff("198.51.100.1, 203.0.113.7"))).toBe("refused");
    // Trusted hops on the right are skipped (a chain of our own proxies).
    expect(await kinds(xff("203.0.113.9, 127.0.0.1"))).toBe("open");
    // IPv4-mapped IPv6 is the same client as its IPv4 form.
    expect(await kinds(xff("::ffff:203.0.113.9"))).toBe("refused");
    // No header: the proxy itself.
    expect(await kinds({})).toBe("open");
    expect(await kinds(xff("not an address"))).toBe("refused");
  });

  test("the header from a peer that is not a trusted proxy is ignored", async () => {
    const r = startTestRelay({
      "http.realIpHeader": "X-Forwarded-For",
      "http.trustedProxies": "10.0.0.0/8,fd00::/8",
      "rate.maxConnectionsPerIp": "1",
    });
    expect(await open(r, xff("203.0.113.7"))).not.toBe("refused");
    expect(await open(r, xff("203.0.113.8"))).toBe("refused");
    expect(await open(r, {})).toBe("refused");
  });

  test("per-IP EVENT buckets and exempt ranges apply to the X-Real-IP address", async () => {
    const r = startTestRelay({
      "http.realIpHeader": "X-Real-IP",
      // One a second, two at once: the bucket refills slowly enough that the third is refused.
      "rate.eventsPerSecondPerIp": "1",
      "rate.burstSeconds": "2",
      "rate.exemptIps": "192.0.2.0/24",
    });
    const a = (await open(r, { "X-Real-IP": "203.0.113.7" })) as RawClient;
    const a2 = (await open(r, { "X-Real-IP": "203.0.113.7" })) as RawClient;
    const b = (await open(r, { "X-Real-IP": "2001:db8::5" })) as RawClient;
    const exempt = (await open(r, { "X-Real-IP": "192.0.2.44" })) as RawClient;
    const limited = "rate-limited: slow down: too many EVENT messages";
    expect(await outcomes(a, 1)).toEqual(["ok"]);
    expect(await outcomes(a2, 2)).toEqual(["ok", limited]);
    expect(await outcomes(b, 2)).toEqual(["ok", "ok"]);
    expect(await outcomes(exempt, 5)).toEqual(Array(5).fill("ok"));
  });

  test("the write-policy plugin's sourceInfo is the resolved address", async () => {
    const dir = tempDir("relay-proxy-plugin-");
    const file = join(dir, "where.ts");
    writeFileSync(
      file,
      `for await (const line of console) {
  const req = JSON.parse(line);
  console.log(JSON.stringify({ id: req.event.id, action: "reject", msg: "blocked: " + req.sourceType + " " + req.sourceInfo }));
}
`,
    );
    const plugin = `${process.execPath} ${file}`;
    const trusted = startTestRelay({ "http.realIpHeader": "X-Forwarded-For", "policy.plugin": plugin });
    const untrusted = startTestRelay({
      "http.realIpHeader": "X-Forwarded-For",
      "http.trustedProxies": "192.0.2.1",
      "policy.plugin": plugin,
    });
    const v6 = (await open(trusted, xff("2001:db8::1"))) as RawClient;
    const v4 = (await open(trusted, xff("203.0.113.7"))) as RawClient;
    const direct = (await open(untrusted, xff("203.0.113.7"))) as RawClient;
    expect(await outcomes(v6, 1)).toEqual(["blocked: IP6 2001:db8::1"]);
    expect(await outcomes(v4, 1)).toEqual(["blocked: IP4 203.0.113.7"]);
    expect(await outcomes(direct, 1)).toEqual(["blocked: IP4 127.0.0.1"]);
  });
});
