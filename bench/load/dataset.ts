// The load tool's reproducible dataset: authors and signed events drawn from a seeded PRNG, cached
// under .bench-cache/ because signing tens of thousands of events takes tens of seconds.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { finalizeEvent, getPublicKey } from "nostr-tools/pure";
import { HASHTAGS, prose, Rng } from "./prng.ts";

/** Bump when the generator changes so stale caches are not reused. */
const VERSION = 1;
/** 2023-11-14: fixed so that ids (and the cache) do not depend on the day the bench runs. */
export const BASE_TIME = 1_700_000_000;
const SPAN = 30 * 86_400;

export interface WireEvent {
  id: string;
  pubkey: string;
  created_at: number;
  kind: number;
  tags: string[][];
  content: string;
  sig: string;
}

export interface Author {
  sk: string;
  pk: string;
}

export interface Dataset {
  events: number;
  authors: Author[];
  seed: number;
  list: WireEvent[];
}

export interface DatasetParams {
  events: number;
  authors: number;
  seed: number;
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

/** Generates and signs the dataset (slow: one Schnorr signature per event). */
export function generate(p: DatasetParams, log: (s: string) => void): Dataset {
  const rng = new Rng(p.seed);
  const authors = makeAuthors(rng, p.authors);
  const sks = authors.map((a) => Buffer.from(a.sk, "hex"));
  const list: WireEvent[] = [];
  const recent: Note[] = [];
  const started = performance.now();
  for (let i = 0; list.length < p.events; i++) {
    // Every author first gets a profile and a contact list, then events follow the mix.
    const kind = i < 2 * p.authors ? (i < p.authors ? 0 : 3) : drawKind(rng);
    const ai = i < 2 * p.authors ? i % p.authors : rng.zipfIndex(p.authors);
    const author = authors[ai]!;
    const tags = template(rng, kind, i, authors, recent);
    if (!tags) continue;
    const created_at = BASE_TIME + Math.floor((list.length * SPAN) / p.events) + rng.int(0, 59);
    const e = finalizeEvent({ kind, created_at, tags, content: content(rng, kind, author) }, sks[ai]!);
    const { id, pubkey, sig } = e;
    list.push({ id, pubkey, created_at, kind, tags, content: e.content, sig });
    if (kind === 1) {
      recent.unshift({ id, pk: pubkey });
      if (recent.length > 2000) recent.pop();
    }
    if (list.length % 5000 === 0)
      log(`  signed ${list.length}/${p.events} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  }
  return { events: p.events, authors, seed: p.seed, list };
}

export const cacheDir = (root: string): string => join(root, ".bench-cache");

/** The dataset for these parameters, from the cache when present, else generated and cached. */
export async function loadDataset(
  root: string,
  p: DatasetParams,
  log: (s: string) => void,
): Promise<Dataset> {
  const dir = cacheDir(root);
  const file = join(dir, `dataset-v${VERSION}-e${p.events}-a${p.authors}-s${p.seed}.json`);
  if (existsSync(file)) {
    const d = (await Bun.file(file).json()) as Dataset;
    log(`dataset: ${d.list.length} events from cache ${file}`);
    return d;
  }
  log(`dataset: signing ${p.events} events by ${p.authors} authors (seed ${p.seed}); cached for next time`);
  const t = performance.now();
  const d = generate(p, log);
  mkdirSync(dir, { recursive: true });
  await Bun.write(file, JSON.stringify(d));
  log(`dataset: signed in ${((performance.now() - t) / 1000).toFixed(1)} s → ${file}`);
  return d;
}
