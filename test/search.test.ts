// NIP-50 search over real WebSockets: exact ranked results for English, Chinese, Japanese and Thai
// text, AND semantics, combination with kinds/authors/since, limit after ranking, extensions,
// kind-0 profiles whose replacement leaves the index, live delivery after EOSE, COUNT, and the
// refusal when search is disabled.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getPublicKey } from "nostr-tools/pure";
import { newKey, now, RawClient, signed, startTestRelay } from "./harness.ts";
import { cliSync } from "./procs.ts";

const relay = startTestRelay();
let c: RawClient;
const alice = newKey();
const bob = newKey();
const A = getPublicKey(alice);
const B = getPublicKey(bob);
const base = now() - 10_000;

// English. "relay" occurs 3× in relay3, 3× in guide (title, summary, content), once elsewhere.
const relays = signed(alice, {
  created_at: base + 1,
  content: "Nostr relays store notes. A relay is simple.",
});
const building = signed(bob, {
  created_at: base + 2,
  content: "Building a fast Nostr relay with Bun and LMDB",
});
const coffee = signed(alice, { created_at: base + 3, content: "I love CAFÉ au lait in the morning" });
const guide = signed(bob, {
  kind: 30023,
  created_at: base + 4,
  content: "A long article about running a relay for your friends and family",
  tags: [
    ["d", "guide"],
    ["title", "Relay operations guide"],
    ["summary", "how to run a relay"],
  ],
});
const relay3 = signed(alice, { created_at: base + 5, content: "relay, Relay, RELAY! nostr" });
// Chinese, Japanese, Thai
const zhApples = signed(alice, { created_at: base + 6, content: "我喜欢吃苹果和香蕉" });
const zhTasty = signed(bob, { created_at: base + 7, content: "苹果很好吃" });
const jaTokyo = signed(alice, { created_at: base + 8, content: "東京都に住んでいます" });
const jaWeather = signed(bob, { created_at: base + 9, content: "東京の天気は晴れです" });
const thai = signed(alice, { created_at: base + 10, content: "ภาษาไทยง่ายมาก สวัสดีครับ" });
// NIP-32 language labels
const french = signed(alice, {
  created_at: base + 11,
  content: "bonjour le monde du protocole nostr",
  tags: [
    ["L", "ISO-639-1"],
    ["l", "fr", "ISO-639-1"],
  ],
});
const english = signed(bob, {
  created_at: base + 12,
  content: "hello world of the nostr protocol",
  tags: [
    ["L", "ISO-639-1"],
    ["l", "en", "ISO-639-1"],
  ],
});
const link = signed(bob, {
  created_at: base + 13,
  content: "read https://GitHub.com/nostr-protocol/nips/blob/master/50.md today",
});
const reaction = signed(bob, { kind: 7, created_at: base + 14, content: "relay", tags: [["e", relays.id]] });

const corpus = [
  relays,
  building,
  coffee,
  guide,
  relay3,
  zhApples,
  zhTasty,
  jaTokyo,
  jaWeather,
  thai,
  french,
  english,
  link,
  reaction,
];

beforeAll(async () => {
  c = await RawClient.connect(relay.url);
  for (const e of corpus) expect((await c.publish(e))[2]).toBe(true);
});
afterAll(() => {
  c.close();
});

describe("stored search results, exact ids in rank order", () => {
  const cases: [string, Record<string, unknown>[], string[]][] = [
    // relay3 has the word 3× in 4 tokens; guide 3× in a longer text; then the shorter note first
    ["one English word, BM25 order", [{ search: "relay" }], [relay3.id, guide.id, relays.id, building.id]],
    ["all words must be present", [{ search: "nostr relay" }], [relay3.id, relays.id, building.id]],
    ["a word that is nowhere matches nothing", [{ search: "relay unicorn" }], []],
    ["case and accents are folded", [{ search: "Cafe AU Lait" }], [coffee.id]],
    ["limit is applied after ranking, not by date", [{ search: "relay", limit: 2 }], [relay3.id, guide.id]],
    ["with kinds", [{ search: "relay", kinds: [30023] }], [guide.id]],
    ["with authors", [{ search: "relay", authors: [A] }], [relay3.id, relays.id]],
    ["with since", [{ search: "relay", since: base + 2 }], [relay3.id, guide.id, building.id]],
    ["with until", [{ search: "relay", until: base + 2 }], [relays.id, building.id]],
    ["with a tag", [{ search: "relay", "#d": ["guide"] }], [guide.id]],
    ["kinds without searchable text are never found", [{ search: "relay", kinds: [7] }], []],
    ["article title and summary are searched", [{ search: "operations" }], [guide.id]],
    ["Chinese: the shorter note first", [{ search: "苹果" }], [zhTasty.id, zhApples.id]],
    ["Chinese: two words", [{ search: "苹果 香蕉" }], [zhApples.id]],
    ["Japanese: the shorter note first", [{ search: "東京" }], [jaWeather.id, jaTokyo.id]],
    ["Japanese: two words", [{ search: "東京 天気" }], [jaWeather.id]],
    ["Thai", [{ search: "สวัสดี" }], [thai.id]],
    ["a URL is found by its host", [{ search: "github.com" }], [link.id]],
    ["a URL query matches by host", [{ search: "https://github.com/other/path" }], [link.id]],
    ["URL paths are not indexed", [{ search: "master" }], []],
    ["language: keeps labelled events in that language", [{ search: "nostr language:fr" }], [french.id]],
    ["language: drops unlabelled events", [{ search: "nostr language:en" }], [english.id]],
    ["no stemming: protocole is not protocol", [{ search: "protocol" }], [english.id]],
    ["only extensions: no words, no results", [{ search: "include:spam" }], []],
    [
      "several search filters: each in its own order, each event once",
      [{ search: "苹果" }, { search: "relay", limit: 1 }, { search: "香蕉" }],
      [zhTasty.id, zhApples.id, relay3.id],
    ],
  ];
  for (const [what, filters, want] of cases)
    test(what, async () => {
      expect(await c.req(`s-${what}`.slice(0, 60), ...filters)).toEqual(want);
    });
});

test("include:, domain:, sentiment: and nsfw: are ignored: same results as without them", async () => {
  const plain = await c.req("x1", { search: "nostr" });
  // shorter notes first; english and french tie (one "nostr" in six words each): newest first
  expect(plain).toEqual([relay3.id, english.id, french.id, relays.id, building.id]);
  expect(
    await c.req("x2", { search: "include:spam nostr domain:example.com sentiment:positive nsfw:false" }),
  ).toEqual(plain);
});

describe("kind 0 profiles", () => {
  test("name, about and nip05 are searched; a replaced profile's words are gone", async () => {
    const carol = newKey();
    const old = signed(carol, {
      kind: 0,
      created_at: base + 20,
      content: JSON.stringify({
        name: "Carol Wonderland",
        about: "coffee lover",
        nip05: "carol@example.net",
      }),
    });
    expect((await c.publish(old))[2]).toBe(true);
    expect(await c.req("p1", { search: "wonderland", kinds: [0] })).toEqual([old.id]);
    expect(await c.req("p2", { search: "example.net" })).toEqual([old.id]);
    const replacement = signed(carol, {
      kind: 0,
      created_at: base + 21,
      content: JSON.stringify({
        name: "Carol Liddell",
        about: "tea drinker",
        picture: "https://x.io/wonderland.png",
      }),
    });
    expect((await c.publish(replacement))[2]).toBe(true);
    expect(await c.req("p3", { search: "wonderland" })).toEqual([]);
    expect(await c.req("p4", { search: "example.net" })).toEqual([]);
    expect(await c.req("p5", { search: "carol liddell" })).toEqual([replacement.id]);
    c.send(["COUNT", "p6", { search: "carol" }]);
    expect((await c.next((f) => f[0] === "COUNT" && f[1] === "p6"))[2]).toEqual({ count: 1 });
  });
});

test("a NIP-09 deletion takes the event out of search results and counts", async () => {
  const note = signed(bob, { content: "regrettable sentence about marmalade" });
  expect((await c.publish(note))[2]).toBe(true);
  expect(await c.req("d1", { search: "marmalade" })).toEqual([note.id]);
  const del = signed(bob, { kind: 5, tags: [["e", note.id]] });
  expect((await c.publish(del))[2]).toBe(true);
  expect(await c.req("d2", { search: "marmalade regrettable" })).toEqual([]);
  c.send(["COUNT", "d3", { search: "marmalade" }]);
  expect((await c.next((f) => f[0] === "COUNT" && f[1] === "d3"))[2]).toEqual({ count: 0 });
});

describe("COUNT with search", () => {
  const cases: [string, Record<string, unknown>[], number][] = [
    ["one word", [{ search: "relay" }], 4],
    ["limit is ignored", [{ search: "relay", limit: 1 }], 4],
    ["with kinds and authors", [{ search: "relay", kinds: [1], authors: [B] }], 1],
    // relay3 and relays are in both; alice has 7 kind-1 notes, plus guide and building
    [
      "union with a plain filter counts each event once",
      [{ search: "relay" }, { authors: [A], kinds: [1] }],
      9,
    ],
    ["language:", [{ search: "nostr language:fr" }], 1],
  ];
  for (const [what, filters, want] of cases)
    test(what, async () => {
      const id = `c-${what}`.slice(0, 60);
      c.send(["COUNT", id, ...filters]);
      expect((await c.next((f) => f[0] === "COUNT" && f[1] === id))[2]).toEqual({ count: want });
    });
});

describe("live search subscriptions", () => {
  test("after EOSE only events containing every word arrive, with the same folding", async () => {
    const s = await RawClient.connect(relay.url);
    expect(await s.req("live", { search: "bitcoin halving", kinds: [1] })).toEqual([]);
    const onlyOne = signed(bob, { content: "bitcoin only" });
    const otherKind = signed(bob, { kind: 30023, content: "bitcoin halving", tags: [["d", "x"]] });
    const hit = signed(alice, { content: "The BITCOIN Hälving is near" });
    for (const e of [onlyOne, otherKind, hit]) await c.publish(e);
    const f = await s.next((f) => f[0] === "EVENT" && f[1] === "live");
    expect((f[2] as { id: string }).id).toBe(hit.id);
    await Bun.sleep(50);
    expect(s.frames.filter((f) => f[0] === "EVENT").length).toBe(1);
    s.close();
  });

  test("language: applies live too, and CJK words match live", async () => {
    const s = await RawClient.connect(relay.url);
    await s.req("live2", { search: "寿司 language:ja" });
    const unlabelled = signed(bob, { content: "寿司が好き" });
    const labelled = signed(bob, { content: "寿司が好き", tags: [["l", "ja", "ISO-639-1"]] });
    for (const e of [unlabelled, labelled]) await c.publish(e);
    const f = await s.next((f) => f[0] === "EVENT" && f[1] === "live2");
    expect((f[2] as { id: string }).id).toBe(labelled.id);
    await Bun.sleep(50);
    expect(s.frames.filter((f) => f[0] === "EVENT").length).toBe(1);
    s.close();
  });
});

describe("search disabled", () => {
  test("search filters are refused with CLOSED unsupported:, plain filters still work", async () => {
    const off = startTestRelay({ "search.enabled": "false" });
    try {
      const r = await RawClient.connect(off.url);
      r.send(["REQ", "q", { search: "relay" }]);
      const f = await r.next((f) => f[1] === "q");
      expect(f[0]).toBe("CLOSED");
      expect(String(f[2])).toStartWith("unsupported:");
      expect(await r.req("plain", { kinds: [1] })).toEqual([]);
      r.close();
      const doc = await fetch(off.url.replace("ws://", "http://"), {
        headers: { Accept: "application/nostr+json" },
      }).then((res) => res.json() as Promise<{ supported_nips: number[] }>);
      expect(doc.supported_nips).not.toContain(50);
    } finally {
      await off.destroy();
    }
  });

  test("events stored while search was off are found once it is back on (rebuilt at start)", async () => {
    const off = startTestRelay({ "search.enabled": "false" });
    const dir = off.dir;
    const e = signed(alice, { content: "written while search was off" });
    const r = await RawClient.connect(off.url);
    expect((await r.publish(e))[2]).toBe(true);
    r.close();
    await off.stop();
    const on = startTestRelay({}, dir);
    try {
      const r2 = await RawClient.connect(on.url);
      expect(await r2.req("back", { search: "search off" })).toEqual([e.id]);
      r2.close();
    } finally {
      await on.destroy();
    }
  });
});

describe("relay reindex", () => {
  test("rebuilds the index of a stopped relay's data; results are the same", async () => {
    const r = startTestRelay();
    const e1 = signed(alice, { content: "reindex me please" });
    const e2 = signed(bob, { content: "please reindex me again, please" });
    const w = await RawClient.connect(r.url);
    for (const e of [e1, e2]) expect((await w.publish(e))[2]).toBe(true);
    const before = await w.req("r1", { search: "reindex please" });
    expect(before.toSorted()).toEqual([e1.id, e2.id].toSorted());
    w.close();
    await r.stop();
    const p = cliSync(["reindex", "--quiet", "--data", r.dir]);
    expect({ code: p.code, err: p.err }).toEqual({ code: 0, err: "" });
    expect(p.out).toMatch(/^rebuilt indexes, search, counters and hll from 2 stored events in \d+\.\d s\n$/);
    const again = startTestRelay({}, r.dir);
    try {
      const c2 = await RawClient.connect(again.url);
      expect(await c2.req("r2", { search: "reindex please" })).toEqual(before);
      c2.close();
    } finally {
      await again.destroy();
    }
  });
});
