// NIP-01 publishing over a real WebSocket: OK answers, validation refusals with exact prefixes,
// duplicates, kind classes (replaceable, addressable, ephemeral) and durability across restart.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getPublicKey } from "nostr-tools/pure";
import { newKey, now, RawClient, signed, startTestRelay } from "./harness.ts";

const relay = startTestRelay();
let c: RawClient;
beforeAll(async () => {
  c = await RawClient.connect(relay.url);
});
afterAll(() => {
  c.close();
});

describe("publishing", () => {
  test("a valid event is answered OK true with an empty message and can be read back verbatim", async () => {
    const e = signed(newKey(), { content: 'hello \u007f é 日本 \n"quoted"', tags: [["t", "x"]] });
    expect(await c.publish(e)).toEqual(["OK", e.id, true, ""]);
    const got = await c.req("read-back", { ids: [e.id] });
    expect(got).toEqual([e.id]);
    const { id, pubkey, created_at, kind, tags, content, sig } = e;
    const bytes = JSON.stringify([
      "EVENT",
      "read-back",
      { id, pubkey, created_at, kind, tags, content, sig },
    ]);
    expect(c.raw).toContain(bytes);
  });

  test("an event sent twice is answered OK true with a duplicate: message the second time", async () => {
    const e = signed(newKey());
    await c.publish(e);
    c.send(["EVENT", e]);
    await c.next(
      (f) => f[0] === "OK" && f[1] === e.id && typeof f[3] === "string" && f[3].startsWith("duplicate:"),
    );
  });

  const refusals: [string, (e: Record<string, unknown>) => unknown][] = [
    ["an id that is not the hash of the event", (e) => ({ ...e, content: "changed" })],
    ["a signature that does not verify", (e) => ({ ...e, sig: `${(e.sig as string).slice(0, 126)}00` })],
    ["an uppercase hex id", (e) => ({ ...e, id: (e.id as string).toUpperCase() })],
    ["an uppercase pubkey", (e) => ({ ...e, pubkey: (e.pubkey as string).toUpperCase() })],
    ["a short sig", (e) => ({ ...e, sig: (e.sig as string).slice(0, 100) })],
    ["a fractional created_at", (e) => ({ ...e, created_at: 1.5 })],
    ["a string created_at", (e) => ({ ...e, created_at: "1" })],
    ["a kind above 65535", (e) => ({ ...e, kind: 70000 })],
    ["a negative kind", (e) => ({ ...e, kind: -1 })],
    ["a tag holding a number", (e) => ({ ...e, tags: [["t", 1]] })],
    ["tags that are not an array", (e) => ({ ...e, tags: "x" })],
    ["content that is not a string", (e) => ({ ...e, content: 5 })],
    ["a missing sig", (e) => ({ ...e, sig: undefined })],
  ];
  for (const [what, mutate] of refusals) {
    test(`${what} is refused with OK false "invalid: …"`, async () => {
      const e = signed(newKey(), { content: "original" });
      const bad = mutate({ ...e }) as { id: unknown };
      c.send(["EVENT", bad]);
      const id = typeof bad.id === "string" ? bad.id : "";
      const ok = await c.next((f) => f[0] === "OK" && f[1] === id);
      expect(ok[2]).toBe(false);
      expect(String(ok[3])).toStartWith("invalid: ");
    });
  }

  test("an event dated more than 15 minutes ahead is refused", async () => {
    const e = signed(newKey(), { created_at: now() + 3600 });
    const ok = await c.publish(e);
    expect(ok[2]).toBe(false);
    expect(String(ok[3])).toStartWith("invalid: created_at");
  });

  test("control characters other than the seven NIP-01 escapes are hashed verbatim", async () => {
    // nostr-tools hashes JSON.stringify output (\u0001 escaped), so build the id by NIP-01 rules.
    const { schnorr } = await import("@noble/curves/secp256k1.js");
    const sk = newKey();
    const pubkey = getPublicKey(sk);
    const base = { pubkey, created_at: now(), kind: 1, tags: [], content: "a\u0001b" };
    const commitment = `[0,"${pubkey}",${base.created_at},1,[],"a\u0001b"]`;
    const id = new Bun.CryptoHasher("sha256").update(commitment).digest("hex");
    const sig = Buffer.from(schnorr.sign(Buffer.from(id, "hex"), sk)).toString("hex");
    const event = { ...base, id, sig };
    expect(await c.publish(event)).toEqual(["OK", id, true, ""]);
  });
});

describe("kind classes", () => {
  test("a newer replaceable event replaces the older and the older is refused afterwards", async () => {
    const sk = newKey();
    const t = now() - 100;
    const v1 = signed(sk, { kind: 0, created_at: t, content: "v1" });
    const v2 = signed(sk, { kind: 0, created_at: t + 1, content: "v2" });
    expect((await c.publish(v1))[2]).toBe(true);
    expect((await c.publish(v2))[2]).toBe(true);
    expect(await c.req("r1", { authors: [getPublicKey(sk)], kinds: [0] })).toEqual([v2.id]);
    const older = signed(sk, { kind: 0, created_at: t - 5, content: "v0" });
    const ok = await c.publish(older);
    expect(ok[2]).toBe(false);
    expect(String(ok[3])).toStartWith("duplicate: ");
    expect(await c.req("r2", { authors: [getPublicKey(sk)] })).toEqual([v2.id]);
  });

  test("replaceable events with equal created_at keep the lowest id", async () => {
    const sk = newKey();
    const t = now() - 50;
    const a = signed(sk, { kind: 10002, created_at: t, content: "a" });
    const b = signed(sk, { kind: 10002, created_at: t, content: "b" });
    const [low, high] = a.id < b.id ? [a, b] : [b, a];
    await c.publish(high);
    expect((await c.publish(low))[2]).toBe(true);
    expect((await c.publish(high))[2]).toBe(false);
    expect(await c.req("tie", { kinds: [10002], authors: [getPublicKey(sk)] })).toEqual([low.id]);
  });

  test("addressable events are replaced per d tag only", async () => {
    const sk = newKey();
    const t = now() - 30;
    const a1 = signed(sk, { kind: 30023, created_at: t, tags: [["d", "a"]] });
    const b1 = signed(sk, { kind: 30023, created_at: t, tags: [["d", "b"]] });
    const a2 = signed(sk, { kind: 30023, created_at: t + 1, tags: [["d", "a"]] });
    for (const e of [a1, b1, a2]) expect((await c.publish(e))[2]).toBe(true);
    const got = await c.req("addr", { kinds: [30023], authors: [getPublicKey(sk)] });
    expect(got).toEqual([a2.id, b1.id]);
    expect(await c.req("addr-d", { kinds: [30023], "#d": ["b"] })).toContain(b1.id);
  });

  test("ephemeral events reach live subscribers and are never stored", async () => {
    const sk = newKey();
    const listener = await RawClient.connect(relay.url);
    await listener.req("eph", { kinds: [20001], authors: [getPublicKey(sk)] });
    const e = signed(sk, { kind: 20001, content: "now only" });
    expect(await c.publish(e)).toEqual(["OK", e.id, true, ""]);
    const live = await listener.next((f) => f[0] === "EVENT" && f[1] === "eph");
    expect((live[2] as { id: string }).id).toBe(e.id);
    expect(await c.req("eph-stored", { kinds: [20001], authors: [getPublicKey(sk)] })).toEqual([]);
    listener.close();
  });
});

describe("durability", () => {
  test("events answered OK true are there after a restart on the same data directory", async () => {
    const first = startTestRelay();
    const client = await RawClient.connect(first.url);
    const sk = newKey();
    const t0 = now(); // one clock reading, so no two events tie on created_at
    const events = Array.from({ length: 20 }, (_, i) => signed(sk, { created_at: t0 - i, content: `n${i}` }));
    for (const e of events) client.send(["EVENT", e]);
    for (const e of events) expect((await client.ok(e.id))[2]).toBe(true);
    client.close();
    await first.stop();
    const second = startTestRelay({}, first.dir);
    const again = await RawClient.connect(second.url);
    expect(await again.req("after", { authors: [getPublicKey(sk)] })).toEqual(events.map((e) => e.id));
    again.close();
    await second.destroy();
  });
});

describe("verification backends behind the relay", () => {
  for (const [backend, threads] of [
    ["noble", "0"],
    ["noble", "1"],
    ["auto", "1"],
  ] as const) {
    test(`with verify.backend=${backend} and ${threads} worker thread(s), good events pass and forged ones are refused`, async () => {
      const r = startTestRelay({ "verify.backend": backend, "verify.threads": threads });
      const client = await RawClient.connect(r.url);
      const good = signed(newKey(), { content: backend });
      const forged = { ...signed(newKey()), sig: good.sig };
      const tampered = { ...signed(newKey(), { content: "a" }), content: "b" };
      expect(await client.publish(good)).toEqual(["OK", good.id, true, ""]);
      expect(String((await client.publish(forged))[3])).toBe("invalid: signature verification failed");
      expect(String((await client.publish(tampered))[3])).toStartWith("invalid: event id does not match");
      client.close();
      await r.destroy();
    });
  }
});
