// The API's pure parts: what an event contributes (NIP-10 reply targets, NIP-25 likes, NIP-57
// invoice amounts, NIP-65 markers), counter byte layouts, pubkey references, and which hosts
// the relay prober refuses without online.allowPrivate.
import { describe, expect, test } from "bun:test";
import * as nip19 from "nostr-tools/nip19";
import { isPrivateAddress } from "../src/api/online.ts";
import { parsePubkeyRef } from "../src/api/profile.ts";
import { engagements, invoiceMsats, isLike, relayList, replyTargets } from "../src/engagement/engagement.ts";
import { noteValue, readNote } from "../src/engagement/keys.ts";
import type { NostrEvent } from "../src/nostr/event.ts";

const id = (c: string) => c.repeat(64);
const ev = (kind: number, tags: string[][], content = ""): NostrEvent => ({
  id: id("f"),
  pubkey: id("e"),
  created_at: 1,
  kind,
  tags,
  content,
  sig: "0".repeat(128),
});

describe("NIP-10 reply targets", () => {
  const cases: [string, string[][], string[]][] = [
    ["no e tag: not a reply", [], []],
    ["one positional e tag: a reply to it", [["e", id("a")]], [id("a")]],
    [
      "two positional: root and replied-to",
      [
        ["e", id("a")],
        ["e", id("b")],
      ],
      [id("a"), id("b")],
    ],
    [
      "positional mentions in between are not replies",
      [
        ["e", id("a")],
        ["e", id("c")],
        ["e", id("b")],
      ],
      [id("a"), id("b")],
    ],
    ["marked root only", [["e", id("a"), "", "root"]], [id("a")]],
    [
      "marked root and reply, any order",
      [
        ["e", id("b"), "", "reply"],
        ["e", id("a"), "wss://r", "root"],
      ],
      [id("b"), id("a")],
    ],
    [
      "marked mention and unmarked tags in a marked note are citations",
      [
        ["e", id("a"), "", "root"],
        ["e", id("c"), "", "mention"],
        ["e", id("d")],
      ],
      [id("a")],
    ],
    [
      "root and reply naming the same event count once",
      [
        ["e", id("a"), "", "root"],
        ["e", id("a"), "", "reply"],
      ],
      [id("a")],
    ],
    [
      "ids that are not 64-char lowercase hex are ignored",
      [
        ["e", "A".repeat(64)],
        ["e", "xyz"],
      ],
      [],
    ],
  ];
  for (const [name, tags, want] of cases) test(name, () => expect(replyTargets(ev(1, tags))).toEqual(want));
});

describe("engagements", () => {
  test("NIP-25: + and empty are likes, anything else another reaction, the last e tag is the target", () => {
    expect(["+", "", "-", "🤙", "++"].map(isLike)).toEqual([true, true, false, false, false]);
    expect(
      engagements(
        ev(
          7,
          [
            ["e", id("a")],
            ["e", id("b")],
          ],
          "+",
        ),
      ),
    ).toEqual([{ id: id("b"), field: "likes" }]);
    expect(engagements(ev(7, [["e", id("a")]], "-"))).toEqual([{ id: id("a"), field: "reactions" }]);
    expect(engagements(ev(7, [["p", id("a")]], "+"))).toEqual([]);
  });

  test("NIP-18: a kind 6 reposts its e tag", () => {
    expect(
      engagements(
        ev(6, [
          ["e", id("a")],
          ["p", id("b")],
        ]),
      ),
    ).toEqual([{ id: id("a"), field: "reposts" }]);
  });

  test("NIP-57: a receipt counts its invoice's amount, and only with one", () => {
    const u2500 =
      "lnbc2500u1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpquwpc4curk03c9wlrswe78q4eyqc7d8d0xqzpuyk0sg5g70me25alkluzd2x62aysf2pyy8edtjeevuv4p2d5p76r4zkmneet7uvyakky2zr4cusd45tftc9c5fh0nnqpnl2jfll544esqchsrny";
    expect(invoiceMsats(u2500)).toBe(250_000_000n);
    expect(invoiceMsats(u2500.toUpperCase())).toBe(250_000_000n);
    expect(invoiceMsats("lnbc2500u1garbage")).toBeUndefined();
    expect(
      engagements(
        ev(9735, [
          ["e", id("a")],
          ["bolt11", u2500],
        ]),
      ),
    ).toEqual([{ id: id("a"), field: "zaps", msats: 250_000_000n }]);
    expect(engagements(ev(9735, [["e", id("a")]]))).toEqual([]);
    expect(engagements(ev(9735, [["bolt11", u2500]]))).toEqual([]);
  });
});

test("NIP-65: no marker is read and write; a URL listed twice merges its markers", () => {
  const list = relayList(
    ev(10002, [
      ["r", "wss://a.example/"],
      ["r", "wss://b.example", "read"],
      ["r", "wss://B.example", "write"],
      ["r", "wss://c.example", "write"],
      ["r", "http://not.a.relay"],
      ["r"],
    ]),
  );
  expect(list).toEqual([
    { url: "wss://a.example", read: true, write: true },
    { url: "wss://b.example", read: true, write: true },
    { url: "wss://c.example", read: false, write: true },
  ]);
});

test("note counters round-trip through their bytes and clamp at zero", () => {
  const c = { likes: 1, reactions: 2, reposts: 3, replies: 4, zaps: 5, msats: 2n ** 60n };
  expect(noteValue(c).length).toBe(28);
  expect(readNote(noteValue(c))).toEqual(c);
  expect(readNote(noteValue({ ...c, likes: -3, msats: -1n }))).toEqual({ ...c, likes: 0, msats: 0n });
});

test("pubkey references: npub, nprofile, hex; everything else refused", () => {
  const pk = "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e";
  expect(parsePubkeyRef(nip19.npubEncode(pk))).toEqual({ pubkey: pk });
  expect(parsePubkeyRef(nip19.nprofileEncode({ pubkey: pk, relays: ["wss://r.example"] }))).toEqual({
    pubkey: pk,
  });
  expect(parsePubkeyRef(pk.toUpperCase())).toEqual({ pubkey: pk });
  expect(parsePubkeyRef(nip19.noteEncode(pk))).toEqual({
    error: "invalid: expected an npub or nprofile, got a 'note'",
  });
});

test("the prober refuses loopback, private, link-local and local names", () => {
  const refused = [
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "0.0.0.0",
    "100.64.0.1",
  ];
  const refused6 = ["[::1]", "::", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "ff02::1"];
  const names = ["localhost", "relay.localhost", "printer.local"];
  for (const h of [...refused, ...refused6, ...names]) expect([h, isPrivateAddress(h)]).toEqual([h, true]);
  for (const h of ["8.8.8.8", "172.32.0.1", "2001:db8::1", "relay.damus.io"])
    expect([h, isPrivateAddress(h)]).toEqual([h, false]);
});
