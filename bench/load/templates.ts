// The dataset's content: authors, kinds, tags, created_at and text drawn from the seeded PRNG, in
// one fixed order, so the same (events, authors, seed) give the same events on every machine and
// with every signing backend. Ids are hashed here because later events reply to earlier ones by
// id; only the signatures are left to the signing workers (generate.ts).
import { getPublicKey } from "nostr-tools/pure";
import { HASHTAGS, prose, Rng } from "./prng.ts";

/** 2023-11-14: fixed so that ids (and the cache) do not depend on the day the bench runs. */
export const BASE_TIME = 1_700_000_000;
const SPAN = 30 * 86_400;

export interface Author {
  sk: string;
  pk: string;
}

export interface DatasetParams {
  events: number;
  authors: number;
  seed: number;
}

/** An event with everything but its signature. */
export interface Unsigned {
  id: string;
  /** index of its author in the authors list */
  author: number;
  pubkey: string;
  created_at: number;
  kind: number;
  tags: string[][];
  content: string;
}

export function makeAuthors(rng: Rng, n: number): Author[] {
  const out: Author[] = [];
  while (out.length < n) {
    const sk = rng.bytes(32);
    try {
      out.push({ sk: Buffer.from(sk).toString("hex"), pk: getPublicKey(sk) });
    } catch {
      // A draw of zero or ≥ the curve order is not a key; astronomically rare, but redraw.
    }
  }
  return out;
}

interface Note {
  id: string;
  pk: string;
}

/** Kind weights (percent) for events after every author has a profile and a contact list. */
const MIX: [kind: number, weight: number][] = [
  [1, 55],
  [7, 25],
  [6, 10],
  [30023, 5],
  [3, 3],
  [0, 2],
];

function drawKind(rng: Rng): number {
  let r = rng.float() * 100;
  for (const [k, w] of MIX) {
    r -= w;
    if (r < 0) return k;
  }
  return 1;
}

function template(rng: Rng, kind: number, i: number, authors: Author[], recent: Note[]): string[][] | null {
  const tags: string[][] = [];
  const hashtags = () => {
    for (const t of rng.sample(HASHTAGS, rng.int(1, 3))) tags.push(["t", t]);
  };
  switch (kind) {
    case 0:
    case 3:
      if (kind === 3) for (const a of rng.sample(authors, rng.int(20, 150))) tags.push(["p", a.pk]);
      return tags;
    case 1:
      if (recent.length > 0 && rng.float() < 0.35) {
        // Replies cluster on a few hot threads, as real timelines do.
        const root = rng.zipf(recent);
        tags.push(["e", root.id, "", "root"], ["p", root.pk]);
      }
      if (rng.float() < 0.3) hashtags();
      if (rng.float() < 0.2) tags.push(["p", rng.zipf(authors).pk]);
      return tags;
    case 6:
    case 7: {
      if (recent.length === 0) return null;
      const target = rng.zipf(recent);
      tags.push(["e", target.id, ""], ["p", target.pk]);
      if (kind === 7) tags.push(["k", "1"]);
      return tags;
    }
    case 30023:
      // A handful of slugs per author, so some articles replace earlier versions.
      tags.push(
        ["d", `article-${rng.int(0, 4)}`],
        ["title", `Article ${i}`],
        ["published_at", String(BASE_TIME)],
      );
      hashtags();
      return tags;
    default:
      return tags;
  }
}

function content(rng: Rng, kind: number, author: Author): string {
  if (kind === 0)
    return JSON.stringify({ name: `user-${author.pk.slice(0, 8)}`, about: prose(rng, rng.int(30, 200)) });
  if (kind === 3) return "";
  if (kind === 6 || kind === 7) return kind === 7 ? rng.pick(["+", "🤙", "❤️", "-"]) : "";
  return prose(rng, rng.int(50, 500));
}

/** NIP-01 id: sha256 of the canonical serialisation (what nostr-tools' getEventHash computes). */
const eventId = (pubkey: string, created_at: number, kind: number, tags: string[][], text: string): string =>
  new Bun.CryptoHasher("sha256")
    .update(JSON.stringify([0, pubkey, created_at, kind, tags, text]))
    .digest("hex");

/** The authors of a dataset: the seed's first draws. */
export function drawAuthors(p: DatasetParams): { rng: Rng; authors: Author[] } {
  const rng = new Rng(p.seed);
  return { rng, authors: makeAuthors(rng, p.authors) };
}

/**
 * The dataset's events in order, unsigned. `rng` must be the one drawAuthors returned (the
 * events' draws continue its sequence).
 */
export function* drawEvents(p: DatasetParams, rng: Rng, authors: Author[]): Generator<Unsigned> {
  const recent: Note[] = [];
  let n = 0;
  for (let i = 0; n < p.events; i++) {
    // Every author first gets a profile and a contact list, then events follow the mix.
    const kind = i < 2 * p.authors ? (i < p.authors ? 0 : 3) : drawKind(rng);
    const ai = i < 2 * p.authors ? i % p.authors : rng.zipfIndex(p.authors);
    const author = authors[ai]!;
    const tags = template(rng, kind, i, authors, recent);
    if (!tags) continue;
    const created_at = BASE_TIME + Math.floor((n * SPAN) / p.events) + rng.int(0, 59);
    const text = content(rng, kind, author);
    const id = eventId(author.pk, created_at, kind, tags, text);
    if (kind === 1) {
      recent.unshift({ id, pk: author.pk });
      if (recent.length > 2000) recent.pop();
    }
    n++;
    yield { id, author: ai, pubkey: author.pk, created_at, kind, tags, content: text };
  }
}
