// The HTTP API over a data set published over WebSocket: exact engagement counts (likes vs other
// reactions, reposts, NIP-10 replies, zaps with amounts from BOLT-11 spec invoices), trending
// order and window, profiles (metadata, follows, followers, NIP-65 relays, notes), search with
// author profiles, errors, ETag/304 and HEAD; then removals (a deleted like, a replaced contact
// list) and a restart that seeds the trending window from the store.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as nip19 from "nostr-tools/nip19";
import { getPublicKey } from "nostr-tools/pure";
import { newKey, now, RawClient, signed, startTestRelay } from "./harness.ts";

// BOLT-11 examples (lightning/bolts 11-payment-encoding.md), decoded by light-bolt11-decoder.
const INVOICE = {
  /** 2500u = 250,000 sats */
  u2500:
    "lnbc2500u1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpquwpc4curk03c9wlrswe78q4eyqc7d8d0xqzpuyk0sg5g70me25alkluzd2x62aysf2pyy8edtjeevuv4p2d5p76r4zkmneet7uvyakky2zr4cusd45tftc9c5fh0nnqpnl2jfll544esqchsrny",
  /** 9678785340p = 967,878,534 msat = 967,878.534 sats */
  pico: "lnbc9678785340p1pwmna7lpp5gc3xfm08u9qy06djf8dfflhugl6p7lgza6dsjxq454gxhj9t7a0sd8dgfkx7cmtwd68yetpd5s9xar0wfjn5gpc8qhrsdfq24f5ggrxdaezqsnvda3kkum5wfjkzmfqf3jkgem9wgsyuctwdus9xgrcyqcjcgpzgfskx6eqf9hzqnteypzxz7fzypfhg6trddjhygrcyqezcgpzfysywmm5ypxxjemgw3hxjmn8yptk7untd9hxwg3q2d6xjcmtv4ezq7pqxgsxzmnyyqcjqmt0wfjjq6t5v4khxxqyjw5qcqp2rzjq0gxwkzc8w6323m55m4jyxcjwmy7stt9hwkwe2qxmy8zpsgg7jcuwz87fcqqeuqqqyqqqqlgqqqqn3qq9qn07ytgrxxzad9hc4xt3mawjjt8znfv8xzscs7007v9gh9j569lencxa8xeujzkxs0uamak9aln6ez02uunw6rd2ht2sqe4hz8thcdagpleym0j",
  /** 20m = 2,000,000 sats */
  m20: "lnbc20m1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqhp58yjmdan79s6qqdhdzgynm4zwqd5d7xmw5fk98klysy043l2ahrqscc6gd6ql3jrc5yzme8v4ntcewwz5cnw92tz0pc8qcuufvq7khhr8wpald05e92xw006sq94mg8v2ndf4sefvf9sygkshp5zfem29trqq2yxxz7",
  /** no amount ("any amount"): not counted */
  none: "lnbc1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpl2pkx2ctnv5sxxmmwwd5kgetjypeh2ursdae8g6twvus8g6rfwvs8qun0dfjkxaq9qrsgq357wnc5r2ueh7ck6q93dj32dlqnls087fxdwk8qakdyafkq3yap9us6v52vjjsrvywa6rt52cm9r9zqt8r2t7mlcwspyetp5h2tztugp9lfyql",
  /** the spec's "invalid checksum" example: not counted */
  badChecksum:
    "lnbc2500u1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpquwpc4curk03c9wlrswe78q4eyqc7d8d0xqzpuyk0sg5g70me25alkluzd2x62aysf2pyy8edtjeevuv4p2d5p76r4zkmneet7uvyakky2zr4cusd45tftc9c5fh0nnqpnl2jfll544esqchsrnt",
};

const [alice, bob, carol, dave, erin, zapper] = [newKey(), newKey(), newKey(), newKey(), newKey(), newKey()];
const [A, B, C, D] = [alice, bob, carol, dave].map((k) => getPublicKey(k)) as [
  string,
  string,
  string,
  string,
];
const t = now();
const DAY = 86400;

// Notes
const n1 = signed(alice, { created_at: t - 100, content: "sunrise sunrise at the lake" });
const n2 = signed(bob, { created_at: t - 90, content: "a quiet sunrise with coffee and good friends today" });
const n3 = signed(carol, { created_at: t - 80, content: "reposted a lot" });
const old = signed(alice, { created_at: t - 2 * DAY, content: "liked a lot, but two days ago" });
const quiet = signed(dave, { created_at: t - 70, content: "nobody reacts to this" });
// Replies (NIP-10): marked root; marked root + reply; marked root + a mention; positional
const r1 = signed(carol, { created_at: t - 60, tags: [["e", n1.id, "", "root"]], content: "nice" });
const r2 = signed(dave, {
  created_at: t - 59,
  tags: [
    ["e", n1.id, "", "root"],
    ["e", r1.id, "", "reply"],
  ],
  content: "agreed",
});
const r3 = signed(erin, {
  created_at: t - 58,
  tags: [
    ["e", n1.id, "", "root"],
    ["e", n3.id, "", "mention"],
  ],
  content: "see also",
});
const p1 = signed(erin, { created_at: t - 57, tags: [["e", n3.id]], content: "old-style reply" });
// Reactions (NIP-25): "+" and "" are likes; "🤙" and "-" are other reactions; the last e tag counts
const react = (sk: Uint8Array, content: string, ...ids: string[]) =>
  signed(sk, { kind: 7, created_at: t - 50, content, tags: ids.map((id) => ["e", id]) });
const likeByBob = react(bob, "+", n1.id);
const reactions = [
  likeByBob,
  react(carol, "", n1.id),
  react(dave, "🤙", n1.id),
  react(erin, "-", n1.id),
  react(alice, "+", n2.id),
  react(erin, "+", quiet.id, n2.id),
  ...[bob, carol, dave, erin, zapper].map((k) => react(k, "+", old.id)),
];
// Reposts (NIP-18)
const repost = (sk: Uint8Array, id: string) =>
  signed(sk, { kind: 6, created_at: t - 40, tags: [["e", id]], content: "" });
const reposts = [repost(bob, n1.id), repost(alice, n3.id), repost(dave, n3.id), repost(erin, n3.id)];
// Zap receipts (NIP-57)
const zap = (id: string, bolt11: string) =>
  signed(zapper, {
    kind: 9735,
    created_at: t - 30,
    tags: [
      ["p", A],
      ["e", id],
      ["bolt11", bolt11],
      ["description", "{}"],
    ],
  });
const zaps = [
  zap(n1.id, INVOICE.u2500),
  zap(n1.id, INVOICE.pico),
  zap(n2.id, INVOICE.m20),
  zap(n2.id, INVOICE.none),
  zap(n3.id, INVOICE.badChecksum),
];
// Profiles, contact lists, relay lists
const aliceMeta = {
  name: "alice",
  display_name: "Alice A.",
  about: "sunrises",
  picture: "https://example.com/a.png",
  banner: "https://example.com/b.png",
  nip05: "alice@example.com",
  lud16: "alice@getalby.com",
  website: "https://alice.example",
  extra: 7,
};
const profiles = [
  signed(alice, { kind: 0, created_at: t - 200, content: JSON.stringify(aliceMeta) }),
  signed(dave, { kind: 0, created_at: t - 200, content: "{not json" }),
  signed(carol, {
    kind: 0,
    created_at: t - 200,
    content: JSON.stringify({ name: 42, displayName: "Carol" }),
  }),
];
const contacts = (sk: Uint8Array, at: number, ...pks: string[]) =>
  signed(sk, { kind: 3, created_at: at, tags: pks.map((pk) => ["p", pk]) });
const bobFollowsV1 = contacts(bob, t - 200, A, C);
const bobFollowsV2 = contacts(bob, t - 100, C, D);
const lists = [
  bobFollowsV1,
  contacts(carol, t - 200, A),
  signed(alice, {
    kind: 3,
    created_at: t - 200,
    tags: [
      ["p", B],
      ["p", B],
      ["p", "not-hex"],
      ["e", n2.id],
    ],
  }),
  signed(alice, {
    kind: 10002,
    created_at: t - 200,
    tags: [
      ["r", "wss://relay.one"],
      ["r", "wss://Relay.Two/", "read"],
      ["r", "wss://relay.three", "write"],
      ["r", "https://not-a-relay.example"],
    ],
  }),
];

/** An event as JSON carries it (nostr-tools marks signed events with a symbol). */
const plain = <T>(e: T): T => JSON.parse(JSON.stringify(e)) as T;

const seed = [
  n1,
  n2,
  n3,
  old,
  quiet,
  r1,
  r2,
  r3,
  p1,
  ...reactions,
  ...reposts,
  ...zaps,
  ...profiles,
  ...lists,
];

let relay = startTestRelay();
let c: RawClient;
let base: string;
const get = (path: string, init?: RequestInit) => fetch(`${base}${path}`, init);
const json = async (path: string) => {
  const r = await get(path);
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
  return (await r.json()) as Record<string, unknown>;
};

beforeAll(async () => {
  base = relay.url.replace("ws://", "http://");
  c = await RawClient.connect(relay.url);
  for (const e of seed) expect((await c.publish(e))[2]).toBe(true);
});
afterAll(() => {
  c.close();
});

const counts = (
  likes: number,
  reactions: number,
  reposts: number,
  replies: number,
  zaps = 0,
  zap_sats = 0,
) => ({
  likes,
  reactions,
  reposts,
  replies,
  zaps,
  zap_sats,
});
const score = (c: ReturnType<typeof counts>) =>
  c.likes + c.reactions + 2 * c.reposts + 2 * c.replies + 3 * c.zaps + Math.log10(1 + c.zap_sats);

const n1Counts = counts(2, 2, 1, 3, 2, 1_217_878); // 250,000 + 967,878.534 sats
const n2Counts = counts(2, 0, 0, 0, 1, 2_000_000);
const n3Counts = counts(0, 0, 3, 1);
const r1Counts = counts(0, 0, 0, 1);
const noAuthor = (pubkey: string) => ({ pubkey, name: null, display_name: null, picture: null, nip05: null });
const aliceAuthor = {
  pubkey: A,
  name: "alice",
  display_name: "Alice A.",
  picture: "https://example.com/a.png",
  nip05: "alice@example.com",
};
const carolAuthor = { ...noAuthor(C), display_name: "Carol" };

describe("GET /v0/trending/notes", () => {
  test("ranks the window's notes by engagement with exact counts; old and quiet notes are left out", async () => {
    const body = await json("/v0/trending/notes");
    const notes = body.notes as { event: { id: string }; author: unknown; counts: unknown; score: number }[];
    expect(notes.map((n) => n.event.id)).toEqual([n1.id, n2.id, n3.id, r1.id]);
    expect(notes.map((n) => n.counts)).toEqual([n1Counts, n2Counts, n3Counts, r1Counts]);
    expect(notes.map((n) => n.score)).toEqual([n1Counts, n2Counts, n3Counts, r1Counts].map(score));
    expect(notes.map((n) => n.author)).toEqual([aliceAuthor, noAuthor(B), carolAuthor, carolAuthor]);
    expect(notes[0]!.event).toEqual(plain(n1));
    expect(body.window).toEqual({ seconds: DAY });
  });

  test("limit cuts the ranking; a bad limit is a 400", async () => {
    const body = await json("/v0/trending/notes?limit=2");
    expect((body.notes as { event: { id: string } }[]).map((n) => n.event.id)).toEqual([n1.id, n2.id]);
    const bad = await get("/v0/trending/notes?limit=ten");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: "invalid: limit must be a positive integer" });
  });
});

describe("GET /v0/p/<npub>", () => {
  test("a full profile: metadata, follows, followers, relay list with markers, note count and latest notes", async () => {
    const body = await json(`/v0/p/${nip19.npubEncode(A)}`);
    const { extra: _, ...fields } = aliceMeta;
    expect(body).toEqual({
      pubkey: A,
      npub: nip19.npubEncode(A),
      metadata: { ...fields, lud06: null },
      follows: { count: 1, pubkeys: [B] },
      followers: 2,
      relays: [
        { url: "wss://relay.one", read: true, write: true },
        { url: "wss://relay.two", read: true, write: false },
        { url: "wss://relay.three", read: false, write: true },
      ],
      notes: {
        count: 2,
        latest: [
          { event: plain(n1), counts: n1Counts },
          { event: plain(old), counts: counts(5, 0, 0, 0) },
        ],
      },
    });
  });

  test("bad kind-0 JSON gives null fields; non-string fields are null; displayName is read", async () => {
    const dave = await json(`/v0/p/${nip19.npubEncode(D)}`);
    expect(Object.values(dave.metadata as object).every((v) => v === null)).toBe(true);
    expect((dave.notes as { count: number }).count).toBe(2);
    const carol = await json(`/v0/p/${nip19.npubEncode(C)}`);
    expect((carol.metadata as Record<string, unknown>).name).toBeNull();
    expect((carol.metadata as Record<string, unknown>).display_name).toBe("Carol");
    expect(carol.followers).toBe(1);
  });

  test("an nprofile and 64-char hex name the same profile", async () => {
    const byNpub = await (await get(`/v0/p/${nip19.npubEncode(A)}`)).text();
    const byProfile = await (
      await get(`/v0/p/${nip19.nprofileEncode({ pubkey: A, relays: ["wss://x.example"] })}`)
    ).text();
    expect(byProfile).toBe(byNpub);
    expect(await (await get(`/v0/p/${A}`)).text()).toBe(byNpub);
  });

  test("an unknown but valid pubkey is an empty profile", async () => {
    const pk = getPublicKey(newKey());
    expect(await json(`/v0/p/${nip19.npubEncode(pk)}`)).toEqual({
      pubkey: pk,
      npub: nip19.npubEncode(pk),
      metadata: {
        name: null,
        display_name: null,
        about: null,
        picture: null,
        banner: null,
        nip05: null,
        lud16: null,
        lud06: null,
        website: null,
      },
      follows: { count: 0, pubkeys: [] },
      followers: 0,
      relays: [],
      notes: { count: 0, latest: [] },
    });
  });

  test("invalid npubs are a 400 with an invalid: reason", async () => {
    const npub = nip19.npubEncode(A);
    const broken = `${npub.slice(0, -1)}${npub.endsWith("q") ? "p" : "q"}`;
    const { bech32 } = await import("@scure/base");
    const short = bech32.encode("npub", bech32.toWords(new Uint8Array(31).fill(1)));
    const nsec = nip19.nsecEncode(alice);
    const cases: [string, string | RegExp][] = [
      [broken, /^invalid: not a bech32 npub \(.*checksum/i],
      ["npub1", /^invalid: not a bech32 npub/],
      [short, "invalid: an npub holds 32 bytes, this one holds 31"],
      [nsec, "invalid: expected an npub or nprofile, got a 'nsec'"],
      [nip19.noteEncode(n1.id), "invalid: expected an npub or nprofile, got a 'note'"],
    ];
    for (const [ref, want] of cases) {
      const r = await get(`/v0/p/${ref}`);
      expect(r.status).toBe(400);
      expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
      const { error } = (await r.json()) as { error: string };
      if (typeof want === "string") expect(error).toBe(want);
      else expect(error).toMatch(want);
    }
  });
});

describe("GET /v0/search", () => {
  test("ranked results with each author's short profile and the note's counts", async () => {
    const body = await json("/v0/search?q=sunrise");
    expect(body.query).toBe("sunrise");
    expect(body.results).toEqual([
      { event: plain(n1), author: aliceAuthor, counts: n1Counts },
      { event: plain(n2), author: noAuthor(B), counts: n2Counts },
    ]);
    const one = await json("/v0/search?q=sunrise&limit=1");
    expect((one.results as { event: { id: string } }[]).map((x) => x.event.id)).toEqual([n1.id]);
    expect((await json("/v0/search?q=unicorn")).results).toEqual([]);
  });

  test("a missing or blank q is a 400", async () => {
    for (const path of ["/v0/search", "/v0/search?q=", "/v0/search?q=%20%20"]) {
      const r = await get(path);
      expect(r.status).toBe(400);
      expect(await r.json()).toEqual({ error: "invalid: missing q, the text to search for" });
    }
  });
});

describe("HTTP behaviour", () => {
  test("ETag and Cache-Control; If-None-Match gives 304; HEAD has the headers and no body", async () => {
    // The plain representation (fetch asks for gzip by default; http-details.test.ts covers it).
    const get = (path: string, init: RequestInit = {}) =>
      fetch(`${base}${path}`, { ...init, headers: { "Accept-Encoding": "identity", ...init.headers } });
    const r = await get("/v0/trending/notes");
    const etag = r.headers.get("etag");
    expect(etag).toMatch(/^"[0-9a-z]+"$/);
    expect(r.headers.get("cache-control")).toBe("public, max-age=10");
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("access-control-expose-headers")).toBe("ETag");
    const body = await r.text();
    const again = await get("/v0/trending/notes", { headers: { "If-None-Match": etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect(again.headers.get("etag")).toBe(etag);
    const weak = await get("/v0/trending/notes", { headers: { "If-None-Match": `"other", W/${etag}` } });
    expect(weak.status).toBe(304);
    const stale = await get("/v0/trending/notes", { headers: { "If-None-Match": '"other"' } });
    expect(stale.status).toBe(200);
    expect(await stale.text()).toBe(body);
    const head = await get("/v0/trending/notes", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("etag")).toBe(etag);
    expect(head.headers.get("content-length")).toBe(`${Buffer.byteLength(body)}`);
    expect(await head.text()).toBe("");
  });

  test("an unknown API path is a JSON 404; OPTIONS is the CORS preflight", async () => {
    for (const path of ["/v0/nope", "/v1/nope", "/v0/p/", "/v0/trending/notes/extra"]) {
      const r = await get(path);
      expect(r.status).toBe(404);
      expect(await r.json()).toEqual({ error: "not found: no such API path (see docs/api.md)" });
    }
    const pre = await get("/v0/search", { method: "OPTIONS" });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-methods")).toContain("GET");
  });
});

describe("counters follow removals", () => {
  test("a deleted like no longer counts, and the ranking moves with it", async () => {
    const del = signed(bob, { kind: 5, tags: [["e", likeByBob.id]] });
    expect((await c.publish(del))[2]).toBe(true);
    const body = await json("/v0/trending/notes?limit=1");
    const [top] = body.notes as { event: { id: string }; counts: unknown; score: number }[];
    const after = { ...n1Counts, likes: 1 };
    expect(top!.event.id).toBe(n1.id);
    expect(top!.counts).toEqual(after);
    expect(top!.score).toBe(score(after));
  });

  test("a replaced contact list moves followers from the old follows to the new ones", async () => {
    const before = async (pk: string) => (await json(`/v0/p/${pk}`)).followers;
    expect([await before(A), await before(C), await before(D)]).toEqual([2, 1, 0]);
    expect((await c.publish(bobFollowsV2))[2]).toBe(true);
    expect([await before(A), await before(C), await before(D)]).toEqual([1, 1, 1]);
    const bobProfile = await json(`/v0/p/${B}`);
    expect(bobProfile.follows).toEqual({ count: 2, pubkeys: [C, D] });
  });

  test("a deleted note leaves the ranking; its own counters stay with its id", async () => {
    const del = signed(carol, { kind: 5, tags: [["e", r1.id]] });
    expect((await c.publish(del))[2]).toBe(true);
    const ids = ((await json("/v0/trending/notes")).notes as { event: { id: string } }[]).map(
      (n) => n.event.id,
    );
    expect(ids).toEqual([n1.id, n2.id, n3.id]);
    // r1 was a reply to n1: deleting it takes its reply away from n1
    const n1Now = ((await json("/v0/trending/notes?limit=1")).notes as { counts: unknown }[])[0]!.counts;
    expect(n1Now).toEqual({ ...n1Counts, likes: 1, replies: 2 });
  });
});

describe("restart", () => {
  test("the trending window is seeded from the store at start-up and ranks the same", async () => {
    const before = await (await get("/v0/trending/notes")).text();
    c.close();
    await relay.stop();
    relay = startTestRelay({}, relay.dir);
    base = relay.url.replace("ws://", "http://");
    c = await RawClient.connect(relay.url);
    // the window's kind-1 notes: n1 n2 n3 quiet r2 r3 p1 (r1 was deleted, `old` is outside)
    expect(relay.ctx.api?.trending?.size).toBe(7);
    expect(await (await get("/v0/trending/notes")).text()).toBe(before);
  });
});
