// Rate limits and the external write-policy plugin (strfry's protocol) over real WebSockets.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { newKey, RawClient, signed, startTestRelay, tempDir } from "./harness.ts";

async function outcomes(c: RawClient, n: number): Promise<string[]> {
  const sk = newKey();
  const events = Array.from({ length: n }, (_, i) => signed(sk, { content: `${i}` }));
  const from = c.frames.length;
  for (const e of events) c.send(["EVENT", e]);
  const oks = await Promise.all(events.map((e) => c.ok(e.id, from)));
  return oks.map((f) => (f[2] ? "ok" : String(f[3]).split(":")[0]!));
}

describe("rate limits", () => {
  test("are off by default", async () => {
    const c = await RawClient.connect(startTestRelay().url);
    expect(await outcomes(c, 30)).toEqual(Array(30).fill("ok"));
    c.close();
  });

  test("a connection over its EVENT rate is refused with rate-limited: and others are not disturbed", async () => {
    const r = startTestRelay({ "rate.eventsPerSecond": "2", "rate.burstSeconds": "1" });
    const flooder = await RawClient.connect(r.url);
    expect(await outcomes(flooder, 5)).toEqual(["ok", "ok", "rate-limited", "rate-limited", "rate-limited"]);
    const calm = await RawClient.connect(r.url);
    expect(await outcomes(calm, 2)).toEqual(["ok", "ok"]);
    flooder.close();
    calm.close();
  });

  test("REQs over the rate are CLOSED rate-limited:, and a flooder is disconnected", async () => {
    const r = startTestRelay({
      "rate.reqsPerSecond": "1",
      "rate.burstSeconds": "1",
      "rate.closeAfterRefusals": "3",
    });
    const c = await RawClient.connect(r.url);
    for (let i = 0; i < 5; i++) c.send(["REQ", `s${i}`, { limit: 0 }]);
    const closed = await c.next((f) => f[0] === "CLOSED" && f[1] === "s1");
    expect(String(closed[2])).toStartWith("rate-limited: ");
    for (let i = 0; i < 100 && !c.closed; i++) await Bun.sleep(10);
    expect(c.closed?.code).toBe(1008);
  });

  test("per-IP buckets are shared by every connection from that address", async () => {
    // A bucket of 3 that refills one a second; the four EVENTs go out at once, so the bucket
    // cannot refill between them however slow the machine is at answering.
    const r = startTestRelay({ "rate.eventsPerSecondPerIp": "1", "rate.burstSeconds": "3" });
    const a = await RawClient.connect(r.url);
    const b = await RawClient.connect(r.url);
    const got = (await Promise.all([outcomes(a, 2), outcomes(b, 2)])).flat().sort();
    expect(got).toEqual(["ok", "ok", "ok", "rate-limited"]);
    a.close();
    b.close();
  });

  test("exempt IPs are never limited", async () => {
    const r = startTestRelay({
      "rate.eventsPerSecond": "1",
      "rate.exemptIps": "127.0.0.1,::1,::ffff:127.0.0.1",
    });
    const c = await RawClient.connect(r.url);
    expect(await outcomes(c, 5)).toEqual(Array(5).fill("ok"));
    c.close();
  });

  test("connections beyond the per-IP cap are refused with 429", async () => {
    const r = startTestRelay({ "rate.maxConnectionsPerIp": "2" });
    const a = await RawClient.connect(r.url);
    const b = await RawClient.connect(r.url);
    await expect(RawClient.connect(r.url)).rejects.toThrow();
    const res = await fetch(r.url.replace("ws", "http"), {
      headers: { Upgrade: "websocket", Connection: "Upgrade" },
    });
    expect(res.status).toBe(429);
    a.close();
    await Bun.sleep(50);
    const c = await RawClient.connect(r.url);
    c.close();
    b.close();
  });
});

describe("write-policy plugin (strfry protocol)", () => {
  const dir = tempDir("relay-plugin-");
  const script = (name: string, body: string) => {
    const file = join(dir, name);
    writeFileSync(file, body);
    return `${process.execPath} ${file}`;
  };
  const judge = script(
    "judge.ts",
    `// Answers like a strfry plugin: reject "spam", shadow-reject "shadow", accept the rest.
const seen = [];
for await (const line of console) {
  const req = JSON.parse(line);
  if (req.type !== "new" || typeof req.sourceInfo !== "string" || typeof req.receivedAt !== "number") continue;
  const c = req.event.content;
  const action = c.includes("spam") ? "reject" : c.includes("shadow") ? "shadowReject" : "accept";
  console.log(JSON.stringify({ id: req.event.id, action, msg: action === "reject" ? "blocked: no spam" : "" }));
}
`,
  );
  const silent = script("silent.ts", "for await (const _ of console) {}\n");

  test("accept, reject and shadowReject are honoured", async () => {
    const r = startTestRelay({ "policy.plugin": judge });
    const c = await RawClient.connect(r.url);
    const sk = newKey();
    const good = signed(sk, { content: "hello" });
    const spam = signed(sk, { content: "buy spam" });
    const shadow = signed(sk, { content: "shadow me" });
    expect(await c.publish(good)).toEqual(["OK", good.id, true, ""]);
    expect(await c.publish(spam)).toEqual(["OK", spam.id, false, "blocked: no spam"]);
    expect(await c.publish(shadow)).toEqual(["OK", shadow.id, true, ""]);
    expect(await c.req("q", { ids: [good.id, spam.id, shadow.id] })).toEqual([good.id]);
    c.close();
  });

  test("a plugin that never answers fails closed after the timeout, or open when configured", async () => {
    const closed = startTestRelay({ "policy.plugin": silent, "policy.pluginTimeoutMs": "200" });
    const c1 = await RawClient.connect(closed.url);
    const e1 = signed(newKey());
    const ok1 = await c1.publish(e1);
    expect(ok1[2]).toBe(false);
    expect(String(ok1[3])).toStartWith("error: ");

    const open = startTestRelay({
      "policy.plugin": silent,
      "policy.pluginTimeoutMs": "200",
      "policy.pluginFailOpen": "true",
    });
    const c2 = await RawClient.connect(open.url);
    expect((await c2.publish(signed(newKey())))[2]).toBe(true);
    c1.close();
    c2.close();
  });

  test("a plugin that dies is restarted for the next event", async () => {
    const once = script(
      "once.ts",
      `for await (const line of console) {
  const req = JSON.parse(line);
  console.log(JSON.stringify({ id: req.event.id, action: "accept" }));
  process.exit(0);
}
`,
    );
    const r = startTestRelay({ "policy.plugin": once, "policy.pluginTimeoutMs": "2000" });
    const c = await RawClient.connect(r.url);
    for (let i = 0; i < 3; i++) expect((await c.publish(signed(newKey())))[2]).toBe(true);
    c.close();
  });
});
