// Seed data for the explorer's browser tests and scripts/screenshots.ts: three authors with
// profiles, a handful of notes over the last hours, a reply, an addressable article, a thread
// three replies deep, and reactions, reposts and zaps whose counts are written out by hand
// (`counts`), zap sats from the BOLT-11 spec's invoices. seedPages adds 120 notes for paging.
import type { NostrEvent } from "nostr-tools/pure";
import { finalizeEvent, generateSecretKey, getPublicKey } from "nostr-tools/pure";
import { RawClient } from "../harness.ts";

export interface Author {
  sk: Uint8Array;
  pubkey: string;
  name: string;
}

/** What the cards show: replies, reposts, reactions (likes and others) and zapped sats. */
export interface CardCounts {
  replies: number;
  reposts: number;
  reactions: number;
  sats: number;
}

export interface Seeded {
  authors: Author[];
  /** every kind-1 note: the notes, the reply and the thread */
  notes: NostrEvent[];
  profiles: NostrEvent[];
  article: NostrEvent;
  reply: NostrEvent;
  /** root, its reply, the reply to that, and one more below (the last in the positional form) */
  thread: [NostrEvent, NostrEvent, NostrEvent, NostrEvent];
  /** reactions, reposts and zap receipts */
  engagement: NostrEvent[];
  /** the counts every kind-1 note should show (all zero when absent) */
  counts: Map<string, CardCounts>;
}

// BOLT-11 examples (lightning/bolts 11-payment-encoding.md).
const INVOICE = {
  /** 2500u: 250,000 sats */
  u2500:
    "lnbc2500u1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpquwpc4curk03c9wlrswe78q4eyqc7d8d0xqzpuyk0sg5g70me25alkluzd2x62aysf2pyy8edtjeevuv4p2d5p76r4zkmneet7uvyakky2zr4cusd45tftc9c5fh0nnqpnl2jfll544esqchsrny",
  /** 20m: 2,000,000 sats */
  m20: "lnbc20m1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqhp58yjmdan79s6qqdhdzgynm4zwqd5d7xmw5fk98klysy043l2ahrqscc6gd6ql3jrc5yzme8v4ntcewwz5cnw92tz0pc8qcuufvq7khhr8wpald05e92xw006sq94mg8v2ndf4sefvf9sygkshp5zfem29trqq2yxxz7",
  /** 9678785340p: 967,878.534 sats, shown as 967,878 */
  pico: "lnbc9678785340p1pwmna7lpp5gc3xfm08u9qy06djf8dfflhugl6p7lgza6dsjxq454gxhj9t7a0sd8dgfkx7cmtwd68yetpd5s9xar0wfjn5gpc8qhrsdfq24f5ggrxdaezqsnvda3kkum5wfjkzmfqf3jkgem9wgsyuctwdus9xgrcyqcjcgpzgfskx6eqf9hzqnteypzxz7fzypfhg6trddjhygrcyqezcgpzfysywmm5ypxxjemgw3hxjmn8yptk7untd9hxwg3q2d6xjcmtv4ezq7pqxgsxzmnyyqcjqmt0wfjjq6t5v4khxxqyjw5qcqp2rzjq0gxwkzc8w6323m55m4jyxcjwmy7stt9hwkwe2qxmy8zpsgg7jcuwz87fcqqeuqqqyqqqqlgqqqqn3qq9qn07ytgrxxzad9hc4xt3mawjjt8znfv8xzscs7007v9gh9j569lencxa8xeujzkxs0uamak9aln6ez02uunw6rd2ht2sqe4hz8thcdagpleym0j",
  /** no amount: not counted */
  none: "lnbc1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpl2pkx2ctnv5sxxmmwwd5kgetjypeh2ursdae8g6twvus8g6rfwvs8qun0dfjkxaq9qrsgq357wnc5r2ueh7ck6q93dj32dlqnls087fxdwk8qakdyafkq3yap9us6v52vjjsrvywa6rt52cm9r9zqt8r2t7mlcwspyetp5h2tztugp9lfyql",
  /** the spec's invalid checksum: not counted */
  bad: "lnbc2500u1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpquwpc4curk03c9wlrswe78q4eyqc7d8d0xqzpuyk0sg5g70me25alkluzd2x62aysf2pyy8edtjeevuv4p2d5p76r4zkmneet7uvyakky2zr4cusd45tftc9c5fh0nnqpnl2jfll544esqchsrnt",
};

const PROFILES = [
  {
    name: "alice",
    display_name: "Alice Moreau",
    about: "Sailing, databases and long walks. Runs a small relay in Lyon.",
    nip05: "alice@example.org",
    website: "https://example.org",
  },
  { name: "bob", display_name: "Bob Okafor", about: "Photographer. Harbours, boats, weather." },
  { name: "carol", display_name: "Carol 🌻", about: "Gardening and NIP reading club." },
];

const NOTES: [author: number, minutesAgo: number, content: string][] = [
  [0, 300, "Good morning, nostr! ☕ Coffee first, then relay maintenance."],
  [1, 240, "Just published the harbour photos from this weekend: https://example.org/harbour"],
  [2, 200, "The tomatoes survived the storm. Small victories."],
  [0, 150, "Anyone running a relay on LMDB? Curious about compaction numbers on a few million events."],
  [1, 90, "Fog over the water this morning.\nPerfect light for black and white."],
  [2, 45, "Reading about NIP-50 search today. Ranking with BM25 is neat, and it works across languages."],
  [0, 12, "Compaction took 40 seconds for 3 GB here. Backups are just `relay compact` to another disk."],
];

export async function seed(url: string, now = Math.floor(Date.now() / 1000)): Promise<Seeded> {
  const authors = PROFILES.map((p) => {
    const sk = generateSecretKey();
    return { sk, pubkey: getPublicKey(sk), name: p.name };
  });
  const sign = (a: Author, kind: number, content: string, created_at: number, tags: string[][] = []) =>
    finalizeEvent({ kind, created_at, tags, content }, a.sk);
  const profiles = authors.map((a, i) => sign(a, 0, JSON.stringify(PROFILES[i]), now - 86_400));
  const notes = NOTES.map(([i, m, content]) => sign(authors[i]!, 1, content, now - m * 60));
  const question = notes[3]!;
  const reply = sign(
    authors[1]!,
    1,
    "Around 2 GB per million notes here, before compaction.",
    now - 120 * 60,
    [
      ["e", question.id, "", "root"],
      ["p", question.pubkey],
    ],
  );
  const article = sign(
    authors[2]!,
    30023,
    "Notes from the reading club: NIP-01 first, then NIP-19 for sharing links.",
    now - 30 * 60,
    [
      ["d", "reading-club"],
      ["title", "Reading club, week 1"],
    ],
  );
  // A thread: a question, a reply (marked root), a reply to it (marked root and reply), and one
  // more below in the deprecated positional form (first e tag the root, last the parent).
  const [alice, bob, carol] = authors as [Author, Author, Author];
  const root = sign(alice, 1, "Which anchor holds best in soft mud?", now - 110 * 60);
  const t1 = sign(bob, 1, "A Danforth, in my experience.", now - 95 * 60, [["e", root.id, "", "root"]]);
  const t2 = sign(carol, 1, "Agreed, with plenty of scope.", now - 70 * 60, [
    ["e", root.id, "", "root"],
    ["e", t1.id, "", "reply"],
  ]);
  const t3 = sign(alice, 1, "Seven to one scope, then.", now - 20 * 60, [
    ["e", root.id],
    ["e", t2.id],
  ]);
  const thread: Seeded["thread"] = [root, t1, t2, t3];

  const fan = () => ({ sk: generateSecretKey(), pubkey: "", name: "" });
  const react = (id: string, content: string) => sign(fan(), 7, content, now - 5 * 60, [["e", id]]);
  const repost = (id: string) => sign(fan(), 6, "", now - 5 * 60, [["e", id]]);
  const zap = (id: string, bolt11: string) =>
    sign(fan(), 9735, "", now - 5 * 60, [
      ["e", id],
      ["bolt11", bolt11],
    ]);
  const [morning, harbour, tomatoes, , fog, search, backups] = notes as [
    NostrEvent,
    NostrEvent,
    NostrEvent,
    NostrEvent,
    NostrEvent,
    NostrEvent,
    NostrEvent,
  ];
  const engagement = [
    ...[react(backups.id, "+"), react(backups.id, "+"), react(backups.id, ""), react(backups.id, "🤙")],
    repost(backups.id),
    repost(backups.id),
    zap(backups.id, INVOICE.u2500),
    zap(backups.id, INVOICE.m20),
    react(search.id, "+"),
    react(search.id, "-"),
    repost(search.id),
    zap(search.id, INVOICE.pico),
    react(fog.id, "+"),
    react(root.id, "+"),
    react(root.id, "⚓"),
    zap(root.id, INVOICE.u2500),
    react(t2.id, "🔥"),
    zap(harbour.id, INVOICE.none),
    zap(tomatoes.id, INVOICE.bad),
    react(morning.id, "+"),
  ];
  const counts = new Map<string, CardCounts>([
    [backups.id, { replies: 0, reposts: 2, reactions: 4, sats: 2_250_000 }],
    [search.id, { replies: 0, reposts: 1, reactions: 2, sats: 967_878 }],
    [fog.id, { replies: 0, reposts: 0, reactions: 1, sats: 0 }],
    [question.id, { replies: 1, reposts: 0, reactions: 0, sats: 0 }],
    [root.id, { replies: 3, reposts: 0, reactions: 2, sats: 250_000 }],
    [t1.id, { replies: 1, reposts: 0, reactions: 0, sats: 0 }],
    [t2.id, { replies: 1, reposts: 0, reactions: 1, sats: 0 }],
    [morning.id, { replies: 0, reposts: 0, reactions: 1, sats: 0 }],
  ]);

  const client = await RawClient.connect(url);
  for (const ev of [...profiles, ...notes, reply, article, ...thread, ...engagement]) {
    const ok = await client.publish(ev);
    if (ok[2] !== true) throw new Error(`seed event refused: ${JSON.stringify(ok)}`);
  }
  client.close();
  return {
    authors,
    notes: [...notes, reply, ...thread],
    profiles,
    article,
    reply,
    thread,
    engagement,
    counts,
  };
}

export interface PagesSeeded {
  /** a long-form article every note replies to (so it is not itself a kind-1 note) */
  root: NostrEvent;
  /** 120 kind-1 notes by one author, each with the word "paging", newest first */
  notes: NostrEvent[];
  author: string;
}

/**
 * 120 notes by one author, all replies to one article and all matching the search "paging",
 * dated seven to a second so that every page of 30 ends inside a run of equal created_at.
 */
export async function seedPages(url: string, now = Math.floor(Date.now() / 1000)): Promise<PagesSeeded> {
  const sk = generateSecretKey();
  const root = finalizeEvent(
    { kind: 30023, created_at: now - 7200, tags: [["d", "logbook"]], content: "The logbook, page by page." },
    sk,
  );
  const notes = Array.from({ length: 120 }, (_, i) =>
    finalizeEvent(
      {
        kind: 1,
        created_at: now - 3600 - Math.floor(i / 7),
        tags: [["e", root.id, "", "root"]],
        content: `paging entry ${i}`,
      },
      sk,
    ),
  ).sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1));
  const client = await RawClient.connect(url);
  for (const ev of [root, ...notes]) {
    const ok = await client.publish(ev);
    if (ok[2] !== true) throw new Error(`seed event refused: ${JSON.stringify(ok)}`);
  }
  client.close();
  return { root, notes, author: getPublicKey(sk) };
}
