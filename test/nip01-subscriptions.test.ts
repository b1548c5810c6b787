// NIP-01 subscriptions over a real WebSocket: filter fields, ordering, limits, several filters,
// EOSE then live delivery, CLOSE and replacement by a new REQ with the same id, and COUNT.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getPublicKey } from "nostr-tools/pure";
import { newKey, now, RawClient, signed, startTestRelay } from "./harness.ts";

const relay = startTestRelay();
let c: RawClient;
const alice = newKey();
const bob = newKey();
const A = getPublicKey(alice);
const B = getPublicKey(bob);
const base = now() - 1000;
// A small fixed corpus; ids sorted newest first (created_at desc, id asc) as the relay must send.
const root = signed(alice, { created_at: base, content: "root", tags: [["t", "nostr"]] });
const reply = signed(bob, {
  created_at: base + 10,
  content: "reply",
  tags: [
    ["e", root.id],
    ["p", A],
  ],
});
const reaction = signed(bob, {
  kind: 7,
  created_at: base + 20,
  content: "+",
  tags: [
    ["e", root.id],
    ["p", A],
  ],
});
const other = signed(alice, {
  created_at: base + 30,
  content: "other",
  tags: [
    ["t", "bun"],
    ["t", "nostr"],
  ],
});
const tieA = signed(alice, { created_at: base + 40, content: "tie a" });
const tieB = signed(bob, { created_at: base + 40, content: "tie b" });
const corpus = [root, reply, reaction, other, tieA, tieB];
const ordered = [...corpus]
  .sort((x, y) => y.created_at - x.created_at || (x.id < y.id ? -1 : 1))
  .map((e) => e.id);

beforeAll(async () => {
  c = await RawClient.connect(relay.url);
  for (const e of corpus) expect((await c.publish(e))[2]).toBe(true);
});
afterAll(() => {
  c.close();
});

describe("stored queries", () => {
  const cases: [string, Record<string, unknown>[], string[]][] = [
    ["everything, newest first with ties by id", [{}], ordered],
    ["by ids", [{ ids: [root.id, reaction.id] }], [reaction.id, root.id]],
    ["by author", [{ authors: [B] }], ordered.filter((id) => [reply.id, reaction.id, tieB.id].includes(id))],
    ["by kind", [{ kinds: [7] }], [reaction.id]],
    [
      "by author and kind",
      [{ authors: [B], kinds: [1] }],
      ordered.filter((id) => [reply.id, tieB.id].includes(id)),
    ],
    ["replies, reactions and zaps by #e", [{ "#e": [root.id] }], [reaction.id, reply.id]],
    ["mentions by #p with a kind", [{ "#p": [A], kinds: [1] }], [reply.id]],
    ["by #t", [{ "#t": ["nostr"] }], [other.id, root.id]],
    ["by two tag conditions at once", [{ "#t": ["nostr"], "#e": [] }], []],
    [
      "since and until are inclusive",
      [{ since: base + 10, until: base + 30 }],
      [other.id, reaction.id, reply.id],
    ],
    ["limit keeps the newest", [{ limit: 2 }], ordered.slice(0, 2)],
    [
      "limit cutting a created_at tie keeps the lowest id",
      [{ since: base + 40, limit: 1 }],
      ordered.slice(0, 1),
    ],
    ["limit 0 returns nothing stored", [{ limit: 0 }], []],
    ["an empty ids list matches nothing", [{ ids: [] }], []],
    ["since after until matches nothing", [{ since: base + 30, until: base }], []],
    ["an unknown id matches nothing", [{ ids: ["0".repeat(64)] }], []],
    [
      "several filters are OR'd and an event matching two is sent once",
      [{ authors: [A] }, { "#t": ["nostr"] }, { kinds: [7] }],
      ordered.filter((id) => [root.id, other.id, tieA.id, reaction.id].includes(id)),
    ],
    [
      "each filter keeps its own limit",
      [
        { kinds: [1], limit: 1 },
        { kinds: [7], limit: 1 },
      ],
      [ordered[0]!, reaction.id],
    ],
  ];
  for (const [what, filters, want] of cases) {
    test(`${what}`, async () => {
      expect(await c.req(`q-${what}`.slice(0, 60), ...filters)).toEqual(want);
    });
  }
});

describe("COUNT", () => {
  test("counts the union of filters exactly", async () => {
    c.send(["COUNT", "c1", { authors: [A] }, { "#t": ["nostr"] }]);
    const f = await c.next((f) => f[0] === "COUNT" && f[1] === "c1");
    expect(f[2]).toEqual({ count: 3 });
  });

  test("counts by tag without a limit", async () => {
    c.send(["COUNT", "c2", { "#e": [root.id], limit: 1 }]);
    const f = await c.next((f) => f[0] === "COUNT" && f[1] === "c2");
    expect(f[2]).toEqual({ count: 2 });
  });
});

describe("live subscriptions", () => {
  test("after EOSE, new matching events arrive live and others do not", async () => {
    const s = await RawClient.connect(relay.url);
    const sk = newKey();
    expect(await s.req("live", { authors: [getPublicKey(sk)] })).toEqual([]);
    const miss = signed(newKey(), { content: "not for you" });
    const hit = signed(sk, { content: "for you" });
    await c.publish(miss);
    await c.publish(hit);
    const f = await s.next((f) => f[0] === "EVENT" && f[1] === "live");
    expect((f[2] as { id: string }).id).toBe(hit.id);
    await Bun.sleep(50);
    expect(s.frames.filter((f) => f[0] === "EVENT").length).toBe(1);
    s.close();
  });

  test("limit 0 sends EOSE at once and then live events", async () => {
    const s = await RawClient.connect(relay.url);
    expect(await s.req("zero", { kinds: [1], limit: 0 })).toEqual([]);
    const e = signed(alice, { content: "after zero" });
    await c.publish(e);
    const f = await s.next((f) => f[0] === "EVENT" && f[1] === "zero");
    expect((f[2] as { id: string }).id).toBe(e.id);
    s.close();
  });

  test("an event matching two filters of one subscription is delivered once", async () => {
    const s = await RawClient.connect(relay.url);
    const sk = newKey();
    await s.req("twice", { authors: [getPublicKey(sk)] }, { kinds: [1], "#t": ["twice"] });
    const e = signed(sk, { tags: [["t", "twice"]] });
    await c.publish(e);
    await s.next((f) => f[0] === "EVENT" && f[1] === "twice");
    await Bun.sleep(50);
    expect(s.frames.filter((f) => f[0] === "EVENT" && f[1] === "twice").length).toBe(1);
    s.close();
  });

  test("a duplicate is not broadcast again", async () => {
    const s = await RawClient.connect(relay.url);
    const sk = newKey();
    await s.req("dup", { authors: [getPublicKey(sk)] });
    const e = signed(sk);
    await c.publish(e);
    await c.publish(e);
    await s.next((f) => f[0] === "EVENT");
    await Bun.sleep(50);
    expect(s.frames.filter((f) => f[0] === "EVENT").length).toBe(1);
    s.close();
  });

  test("CLOSE stops delivery and a REQ with the same id replaces the subscription", async () => {
    const s = await RawClient.connect(relay.url);
    const sk = newKey();
    const pk = getPublicKey(sk);
    await s.req("x", { authors: [pk], kinds: [1] });
    await s.req("x", { authors: [pk], kinds: [7] }); // replaces: only kind 7 now
    await c.publish(signed(sk, { kind: 1 }));
    const r = signed(sk, { kind: 7, content: "+" });
    await c.publish(r);
    const f = await s.next((f) => f[0] === "EVENT" && f[1] === "x");
    expect((f[2] as { id: string }).id).toBe(r.id);
    s.send(["CLOSE", "x"]);
    await Bun.sleep(20);
    await c.publish(signed(sk, { kind: 7, content: "-" }));
    await Bun.sleep(50);
    expect(s.frames.filter((f) => f[0] === "EVENT").length).toBe(1);
    s.close();
  });
});
