// GET /v0/notes/counts, the API answer the explorer asks once per page of cards: exact counts for
// many notes in the order asked (zap sats from the invoices), zeros for notes without
// engagement, 100 ids in one URL, the refusals, and 404 with the API off.
import { describe, expect, test } from "bun:test";
import { newKey, RawClient, signed, startTestRelay } from "../harness.ts";

// BOLT-11 examples (lightning/bolts 11-payment-encoding.md): 250,000 and 967,878.534 sats.
const U2500 =
  "lnbc2500u1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpquwpc4curk03c9wlrswe78q4eyqc7d8d0xqzpuyk0sg5g70me25alkluzd2x62aysf2pyy8edtjeevuv4p2d5p76r4zkmneet7uvyakky2zr4cusd45tftc9c5fh0nnqpnl2jfll544esqchsrny";
const PICO =
  "lnbc9678785340p1pwmna7lpp5gc3xfm08u9qy06djf8dfflhugl6p7lgza6dsjxq454gxhj9t7a0sd8dgfkx7cmtwd68yetpd5s9xar0wfjn5gpc8qhrsdfq24f5ggrxdaezqsnvda3kkum5wfjkzmfqf3jkgem9wgsyuctwdus9xgrcyqcjcgpzgfskx6eqf9hzqnteypzxz7fzypfhg6trddjhygrcyqezcgpzfysywmm5ypxxjemgw3hxjmn8yptk7untd9hxwg3q2d6xjcmtv4ezq7pqxgsxzmnyyqcjqmt0wfjjq6t5v4khxxqyjw5qcqp2rzjq0gxwkzc8w6323m55m4jyxcjwmy7stt9hwkwe2qxmy8zpsgg7jcuwz87fcqqeuqqqyqqqqlgqqqqn3qq9qn07ytgrxxzad9hc4xt3mawjjt8znfv8xzscs7007v9gh9j569lencxa8xeujzkxs0uamak9aln6ez02uunw6rd2ht2sqe4hz8thcdagpleym0j";

const relay = startTestRelay();
const base = relay.url.replace("ws://", "http://");
const zero = { likes: 0, reactions: 0, reposts: 0, replies: 0, zaps: 0, zap_sats: 0 };

describe("GET /v0/notes/counts", () => {
  test("answers the counts of each note asked, once each, in the order asked", async () => {
    const sk = newKey();
    const note = signed(sk, { content: "counted" });
    const quiet = signed(sk, { content: "not engaged" });
    const e = (id: string) => ["e", id];
    const events = [
      note,
      quiet,
      signed(newKey(), { kind: 7, content: "+", tags: [e(note.id)] }),
      signed(newKey(), { kind: 7, content: "🤙", tags: [e(note.id)] }),
      signed(newKey(), { kind: 6, tags: [e(note.id)] }),
      signed(newKey(), { tags: [["e", note.id, "", "root"]], content: "a reply" }),
      signed(newKey(), { kind: 9735, tags: [e(note.id), ["bolt11", U2500]] }),
      signed(newKey(), { kind: 9735, tags: [e(note.id), ["bolt11", PICO]] }),
    ];
    const c = await RawClient.connect(relay.url);
    for (const ev of events) expect((await c.publish(ev))[2]).toBe(true);
    c.close();
    const absent = "f".repeat(64);
    const r = await fetch(`${base}/v0/notes/counts?ids=${[quiet.id, note.id, absent, quiet.id].join(",")}`);
    expect(r.status).toBe(200);
    expect(r.headers.get("etag")).toMatch(/^"/);
    expect(await r.json()).toEqual({
      notes: [
        { id: quiet.id, counts: zero },
        {
          id: note.id,
          counts: { likes: 1, reactions: 1, reposts: 1, replies: 1, zaps: 2, zap_sats: 1217878 },
        },
        { id: absent, counts: zero },
      ],
    });
  });

  test("takes 100 ids in one URL and refuses 101", async () => {
    const ids = Array.from({ length: 101 }, (_, i) => i.toString(16).padStart(64, "0"));
    const r = await fetch(`${base}/v0/notes/counts?ids=${ids.slice(0, 100).join(",")}`);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { notes: { id: string }[] };
    expect(body.notes.map((n) => n.id)).toEqual(ids.slice(0, 100));
    const over = await fetch(`${base}/v0/notes/counts?ids=${ids.join(",")}`);
    expect(over.status).toBe(400);
    expect(await over.json()).toEqual({ error: "invalid: at most 100 ids in one request" });
  });

  test("refuses a missing list and ids that are not 64 lowercase hex", async () => {
    const bad = "invalid: ids must be note ids of 64 lowercase hex characters, separated by commas";
    for (const [query, error] of [
      ["", "invalid: missing ids, the comma-separated note ids"],
      ["?ids=", "invalid: missing ids, the comma-separated note ids"],
      [`?ids=${"A".repeat(64)}`, bad],
      [`?ids=${"a".repeat(63)}`, bad],
      [`?ids=${"a".repeat(64)},`, bad],
    ] as const) {
      const r = await fetch(`${base}/v0/notes/counts${query}`);
      expect(r.status).toBe(400);
      expect(await r.json()).toEqual({ error });
    }
  });

  test("is not found with the API off", async () => {
    const off = startTestRelay({ "api.enabled": "false" });
    const r = await fetch(`${off.url.replace("ws://", "http://")}/v0/notes/counts?ids=${"a".repeat(64)}`);
    expect(r.status).toBe(404);
  });
});
