// NIP-45 COUNT over real WebSockets: exact counts for many filter shapes, and for the shapes
// NIP-45 names an `hll` whose registers equal nostr-tools' computation over the counted
// events' pubkeys. Replaced contact lists leave the follower count.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { computeOffset, estimateCount, feedPubkey, hllDecode, hllEncode, newHll } from "nostr-tools/nip45";
import { getPublicKey } from "nostr-tools/pure";
import { newKey, now, RawClient, signed, startTestRelay } from "./harness.ts";

const relay = startTestRelay();
let c: RawClient;
const base = now() - 10_000;
const alice = newKey();
const A = getPublicKey(alice);
const target = signed(alice, { created_at: base, content: "count me" });
const other = signed(alice, { created_at: base + 1, content: "another note" });
// Fixed keys: an HLL estimate depends on the pubkeys, so random ones would make its bounds flaky.
const keys = Array.from({ length: 40 }, (_, i) =>
  Uint8Array.from(new Bun.CryptoHasher("sha256").update(`count-test-key-${i}`).digest()),
);
const pk = keys.map((k) => getPublicKey(k));

const e = (id: string) => ["e", id];
// 40 people react once; the first 5 react a second time (35 + 5 + 40 = events; 40 pubkeys)
const reactions = [
  ...keys.map((k, i) =>
    signed(k, { kind: 7, created_at: base + 10 + i, content: "+", tags: [e(target.id)] }),
  ),
  ...keys
    .slice(0, 5)
    .map((k, i) => signed(k, { kind: 7, created_at: base + 60 + i, content: "🤙", tags: [e(target.id)] })),
];
const reposts = keys
  .slice(0, 3)
  .map((k, i) => signed(k, { kind: 6, created_at: base + 70 + i, tags: [e(target.id)] }));
const replies = keys
  .slice(3, 7)
  .map((k, i) => signed(k, { created_at: base + 80 + i, content: "reply", tags: [e(target.id)] }));
const quotes = keys
  .slice(7, 9)
  .map((k, i) => signed(k, { created_at: base + 90 + i, content: "quote", tags: [["q", target.id]] }));
const comments = keys
  .slice(9, 11)
  .map((k, i) =>
    signed(k, { kind: 1111, created_at: base + 95 + i, content: "comment", tags: [["E", target.id]] }),
  );
const otherReactions = keys
  .slice(0, 2)
  .map((k, i) => signed(k, { kind: 7, created_at: base + 100 + i, tags: [e(other.id)] }));
// 12 follow alice
const follows = keys
  .slice(10, 22)
  .map((k, i) => signed(k, { kind: 3, created_at: base + 110 + i, tags: [["p", A]] }));

const all = [
  target,
  other,
  ...reactions,
  ...reposts,
  ...replies,
  ...quotes,
  ...comments,
  ...otherReactions,
  ...follows,
];

beforeAll(async () => {
  c = await RawClient.connect(relay.url);
  const oks = await Promise.all(all.map((ev) => c.publish(ev)));
  for (const ok of oks) expect(ok[2]).toBe(true);
});
afterAll(() => {
  c.close();
});

let n = 0;
async function count(...filters: unknown[]): Promise<{ count: number; hll?: string }> {
  const id = `n${++n}`;
  c.send(["COUNT", id, ...filters]);
  const f = await c.next((f) => f[1] === id && (f[0] === "COUNT" || f[0] === "CLOSED"));
  expect(f[0]).toBe("COUNT");
  return f[2] as { count: number; hll?: string };
}

/** nostr-tools' registers over these events' pubkeys, for the given first tag value. */
function expectedHll(events: { pubkey: string }[], tagValue: string): string {
  const offset = computeOffset(tagValue);
  let h = newHll();
  for (const ev of events) h = feedPubkey(h, ev.pubkey, offset);
  return hllEncode(h);
}

describe("exact counts", () => {
  const cases: [string, unknown[], number][] = [
    ["everything", [{}], all.length],
    ["one kind", [{ kinds: [7] }], 47],
    ["two kinds", [{ kinds: [6, 7] }], 50],
    ["by author", [{ authors: [A] }], 2],
    ["by authors and kinds", [{ authors: pk.slice(0, 5), kinds: [7] }], 12],
    ["by #e", [{ "#e": [target.id] }], 45 + 3 + 4],
    ["by #e and two kinds", [{ "#e": [target.id], kinds: [6, 7] }], 48],
    ["by #e with two values", [{ "#e": [target.id, other.id], kinds: [7] }], 47],
    ["by #e and an author", [{ "#e": [target.id], authors: [pk[0]] }], 3],
    ["by #e and since", [{ "#e": [target.id], kinds: [7], since: base + 60 }], 5],
    ["by ids", [{ ids: [target.id, other.id, "0".repeat(64)] }], 2],
    ["union of overlapping filters", [{ kinds: [6] }, { "#e": [target.id], kinds: [6, 1] }], 7],
    ["limit is ignored", [{ kinds: [7], limit: 1 }], 47],
    ["nothing", [{ kinds: [9999] }], 0],
    ["empty list", [{ authors: [] }], 0],
  ];
  for (const [what, filters, want] of cases)
    test(what, async () => {
      const r = await count(...filters);
      expect(r.count).toBe(want);
    });

  test("shapes outside NIP-45's list get no hll", async () => {
    for (const filters of [[{ kinds: [7] }], [{ "#e": [target.id] }], [{ "#e": [target.id], kinds: [6, 7] }]])
      expect(await count(...filters)).not.toHaveProperty("hll");
    const two = await count({ "#e": [target.id], kinds: [7] }, { "#e": [target.id], kinds: [7] });
    expect(two).toEqual({ count: 45 });
  });
});

describe("counts the indexes answer alone", () => {
  test("an event deleted since it was indexed, or expired and not yet purged, is not counted", async () => {
    const r = startTestRelay({ "consumers.intervalMs": "20", "consumers.idleMs": "5" });
    const w = await RawClient.connect(r.url);
    const author = newKey();
    const notes = [0, 1, 2].map((i) => signed(author, { content: `n${i}`, tags: [["t", "keys"]] }));
    for (const x of notes) expect((await w.publish(x))[2]).toBe(true);
    // Far enough ahead that the counts before it expires hold on a slow machine.
    const expires = now() + 4;
    const soon = signed(newKey(), {
      content: "short-lived",
      tags: [
        ["t", "keys"],
        ["expiration", String(expires)],
      ],
    });
    expect((await w.publish(soon))[2]).toBe(true);
    const countOf = async (id: string, f: object) => {
      w.send(["COUNT", id, f]);
      return ((await w.next((x) => x[0] === "COUNT" && x[1] === id))[2] as { count: number }).count;
    };
    expect(await countOf("a", { "#t": ["keys"] })).toBe(4);
    await Bun.sleep(100); // indexed by now (either way the counts must be the same)
    const del = signed(author, { kind: 5, tags: [["e", notes[0]!.id]] });
    expect((await w.publish(del))[2]).toBe(true);
    expect(await countOf("b", { "#t": ["keys"] })).toBe(3);
    expect(await countOf("c", { authors: [getPublicKey(author)], kinds: [1] })).toBe(2);
    await Bun.sleep((expires + 1) * 1000 - Date.now()); // expired, and the purge runs far later
    expect(await countOf("d", { "#t": ["keys"] })).toBe(2);
    w.close();
    await r.destroy();
  }, 20_000);
});

describe("NIP-45 HyperLogLog", () => {
  const shapes: [string, Record<string, unknown>, { pubkey: string }[], string][] = [
    ["reactions", { "#e": [target.id], kinds: [7] }, reactions, target.id],
    ["reposts", { "#e": [target.id], kinds: [6] }, reposts, target.id],
    ["replies", { "#e": [target.id], kinds: [1] }, replies, target.id],
    ["quotes", { "#q": [target.id], kinds: [1, 1111] }, quotes, target.id],
    ["comments", { "#E": [target.id], kinds: [1111] }, comments, target.id],
    ["followers", { "#p": [A], kinds: [3] }, follows, A],
    ["reactions to an event nobody reacted to", { "#e": ["f".repeat(64)], kinds: [7] }, [], "f".repeat(64)],
  ];
  for (const [what, filter, events, value] of shapes)
    test(`${what}: exact count and nostr-tools' registers`, async () => {
      const r = await count(filter);
      expect(r).toEqual({ count: events.length, hll: expectedHll(events, value) });
    });

  test("repeat reactions count as events but not as people", async () => {
    const r = await count({ "#e": [target.id], kinds: [7] });
    expect(r.count).toBe(45);
    const est = estimateCount(hllDecode(r.hll!)!);
    expect(est).toBeGreaterThanOrEqual(36);
    expect(est).toBeLessThanOrEqual(44);
  });

  test("a replaced contact list leaves the followers' count and registers", async () => {
    const unfollow = signed(keys[10]!, { kind: 3, created_at: base + 200, tags: [] });
    expect((await c.publish(unfollow))[2]).toBe(true);
    const r = await count({ "#p": [A], kinds: [3] });
    expect(r).toEqual({ count: 11, hll: expectedHll(follows.slice(1), A) });
  });

  test("registers from two relays merge to those of the union", async () => {
    const second = startTestRelay();
    try {
      const c2 = await RawClient.connect(second.url);
      const more = keys.slice(30, 40).map((k) => signed(k, { kind: 7, content: "+", tags: [e(other.id)] }));
      for (const ev of more) await c2.publish(ev);
      c2.send(["COUNT", "m", { "#e": [other.id], kinds: [7] }]);
      const r2 = (await c2.next((f) => f[0] === "COUNT" && f[1] === "m"))[2] as { hll: string };
      const r1 = await count({ "#e": [other.id], kinds: [7] });
      const a = hllDecode(r1.hll!)!;
      const b = hllDecode(r2.hll)!;
      const merged = hllEncode(a.map((x, i) => Math.max(x, b[i]!)));
      expect(merged).toBe(expectedHll([...otherReactions, ...more], other.id));
      c2.close();
    } finally {
      await second.destroy();
    }
  });
});
