// Seed data for the explorer's browser tests and scripts/screenshots.ts: three authors with
// profiles, a handful of notes over the last hours, a reply and an addressable article.
import type { NostrEvent } from "nostr-tools/pure";
import { finalizeEvent, generateSecretKey, getPublicKey } from "nostr-tools/pure";
import { RawClient } from "./harness.ts";

export interface Author {
  sk: Uint8Array;
  pubkey: string;
  name: string;
}

export interface Seeded {
  authors: Author[];
  notes: NostrEvent[];
  profiles: NostrEvent[];
  article: NostrEvent;
  reply: NostrEvent;
}

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
  const client = await RawClient.connect(url);
  for (const ev of [...profiles, ...notes, reply, article]) {
    const ok = await client.publish(ev);
    if (ok[2] !== true) throw new Error(`seed event refused: ${JSON.stringify(ok)}`);
  }
  client.close();
  return { authors, notes: [...notes, reply], profiles, article, reply };
}
