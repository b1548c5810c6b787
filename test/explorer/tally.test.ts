// The explorer's own reading of engagement (used when the relay's API is off) against the relay's:
// the same events give the same engagements, invoice amounts included, with invoices that decode,
// that do not, and that carry a valid checksum around random data; and NIP-10 parents.
import { describe, expect, test } from "bun:test";
import { bech32 } from "@scure/base";
import { engagements, invoiceMsats } from "../../src/engagement/engagement.ts";
import {
  engagements as pageEngagements,
  invoiceMsats as pageMsats,
} from "../../src/explorer/client/counts/tally.ts";
import { replyRefs } from "../../src/explorer/client/nostr/nip10.ts";
import type { NostrEvent } from "../../src/nostr/event.ts";

// BOLT-11 examples (lightning/bolts 11-payment-encoding.md).
const SPEC = [
  "lnbc2500u1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpquwpc4curk03c9wlrswe78q4eyqc7d8d0xqzpuyk0sg5g70me25alkluzd2x62aysf2pyy8edtjeevuv4p2d5p76r4zkmneet7uvyakky2zr4cusd45tftc9c5fh0nnqpnl2jfll544esqchsrny",
  "lnbc9678785340p1pwmna7lpp5gc3xfm08u9qy06djf8dfflhugl6p7lgza6dsjxq454gxhj9t7a0sd8dgfkx7cmtwd68yetpd5s9xar0wfjn5gpc8qhrsdfq24f5ggrxdaezqsnvda3kkum5wfjkzmfqf3jkgem9wgsyuctwdus9xgrcyqcjcgpzgfskx6eqf9hzqnteypzxz7fzypfhg6trddjhygrcyqezcgpzfysywmm5ypxxjemgw3hxjmn8yptk7untd9hxwg3q2d6xjcmtv4ezq7pqxgsxzmnyyqcjqmt0wfjjq6t5v4khxxqyjw5qcqp2rzjq0gxwkzc8w6323m55m4jyxcjwmy7stt9hwkwe2qxmy8zpsgg7jcuwz87fcqqeuqqqyqqqqlgqqqqn3qq9qn07ytgrxxzad9hc4xt3mawjjt8znfv8xzscs7007v9gh9j569lencxa8xeujzkxs0uamak9aln6ez02uunw6rd2ht2sqe4hz8thcdagpleym0j",
  "lnbc20m1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqhp58yjmdan79s6qqdhdzgynm4zwqd5d7xmw5fk98klysy043l2ahrqscc6gd6ql3jrc5yzme8v4ntcewwz5cnw92tz0pc8qcuufvq7khhr8wpald05e92xw006sq94mg8v2ndf4sefvf9sygkshp5zfem29trqq2yxxz7",
  "lnbc1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpl2pkx2ctnv5sxxmmwwd5kgetjypeh2ursdae8g6twvus8g6rfwvs8qun0dfjkxaq9qrsgq357wnc5r2ueh7ck6q93dj32dlqnls087fxdwk8qakdyafkq3yap9us6v52vjjsrvywa6rt52cm9r9zqt8r2t7mlcwspyetp5h2tztugp9lfyql",
  // the spec's "invalid checksum" example
  "lnbc2500u1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpquwpc4curk03c9wlrswe78q4eyqc7d8d0xqzpuyk0sg5g70me25alkluzd2x62aysf2pyy8edtjeevuv4p2d5p76r4zkmneet7uvyakky2zr4cusd45tftc9c5fh0nnqpnl2jfll544esqchsrnt",
];

/** A deterministic stream of numbers, so a failure can be replayed. */
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (x * 1664525 + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

/** Invoices with a valid checksum around random words, under prefixes good and bad. */
function randomInvoices(n: number): string[] {
  const r = rng(29);
  const prefixes = [
    "lnbc2500u",
    "lnbc20m",
    "lnbc1p",
    "lnbc10p",
    "lnbc0",
    "lnbc",
    "lntb100n",
    "lnbcrt5u",
    "lnsb1m",
    "lntbs7u",
    "lnxx5u",
    "lnbc5x",
    "lnbc99999999999999999m",
    "lnbc21000000",
  ];
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const len = 7 + 104 + Math.floor(r() * 120) - (i % 5 === 0 ? 110 : 0);
    const words = Array.from({ length: Math.max(1, len) }, () => Math.floor(r() * 32));
    out.push(bech32.encode(prefixes[i % prefixes.length]!, words, false));
  }
  return out;
}

const A = "a".repeat(64);
const B = "b".repeat(64);
const C = "c".repeat(64);
const ev = (kind: number, tags: string[][], content = ""): NostrEvent => ({
  id: "0".repeat(64),
  pubkey: "1".repeat(64),
  created_at: 1,
  kind,
  tags,
  content,
  sig: "2".repeat(128),
});

describe("the page counts as the relay counts", () => {
  test("invoice amounts agree on the spec's examples and on 3,000 random invoices", () => {
    const invoices = [...SPEC, ...randomInvoices(3000), "lnbc", "nope", "LNBC2500U1XYZ", ""];
    const mine = invoices.map(pageMsats);
    expect(mine).toEqual(invoices.map(invoiceMsats));
    expect(mine.slice(0, 5)).toEqual([250000000n, 967878534n, 2000000000n, undefined, undefined]);
    // Both sides found amounts and refusals among the random ones, so the walk was exercised.
    const found = mine.slice(5).filter((m) => m !== undefined).length;
    expect(found).toBeGreaterThan(100);
    expect(found).toBeLessThan(2900);
  });

  test("replies, reposts, reactions and zaps agree, tag by tag", () => {
    const events = [
      ev(1, [["e", A, "", "root"]]),
      ev(1, [
        ["e", A, "", "root"],
        ["e", B, "", "reply"],
      ]),
      ev(1, [
        ["e", A, "", "root"],
        ["e", C, "", "mention"],
      ]),
      ev(1, [
        ["e", A],
        ["e", C],
        ["e", B],
      ]),
      ev(1, [["e", A]]),
      ev(1, [["e", C, "", "mention"]]),
      ev(1, [
        ["e", A.toUpperCase()],
        ["e", "abc"],
      ]),
      ev(1, [
        ["e", B, "wss://r", "reply"],
        ["e", A],
      ]),
      ev(6, [
        ["e", B],
        ["e", A],
      ]),
      ev(6, [["p", A]]),
      ev(
        7,
        [
          ["e", A],
          ["e", B],
        ],
        "+",
      ),
      ev(7, [["e", A]], ""),
      ev(7, [["e", A]], "-"),
      ev(7, [["e", A]], "🤙"),
      ev(7, [], "+"),
      ...SPEC.map((b) =>
        ev(9735, [
          ["e", A],
          ["bolt11", b],
        ]),
      ),
      ev(9735, [["e", A]]),
      ev(9735, [["bolt11", SPEC[0]!]]),
      ev(4, [["e", A]]),
    ];
    for (const e of events) expect(pageEngagements(e)).toEqual(engagements(e));
  });
});

describe("NIP-10 parents", () => {
  test("markers name the parent; without them the last e tag does; mentions are no parent", () => {
    const refs = (tags: string[][]) => replyRefs(ev(1, tags));
    expect(refs([["e", A, "", "root"]])).toEqual({ root: A, parent: A });
    expect(
      refs([
        ["e", A, "", "root"],
        ["e", B, "", "reply"],
      ]),
    ).toEqual({ root: A, parent: B });
    expect(
      refs([
        ["e", C, "", "mention"],
        ["e", A, "", "root"],
      ]),
    ).toEqual({ root: A, parent: A });
    expect(refs([["e", B, "", "reply"]])).toEqual({ root: B, parent: B });
    expect(refs([["e", C, "", "mention"]])).toBeUndefined();
    expect(refs([["e", A]])).toEqual({ root: A, parent: A });
    expect(
      refs([
        ["e", A],
        ["e", C],
        ["e", B],
      ]),
    ).toEqual({ root: A, parent: B });
    expect(refs([["p", A]])).toBeUndefined();
    expect(replyRefs(ev(7, [["e", A]]))).toBeUndefined();
  });
});
