// Searches answered from the high-impact lists (src/search/impact.ts) must equal the full BM25
// ranking, ties and cut included: on a corpus of common words where most answers are decided
// early, with the consumer behind, after removals, and after the lists are rebuilt at another
// reference length. The reference ranking here is computed from the stored events alone. Both
// with the consumers in the main thread and on their own thread, where the searches' walks run
// too (src/search/remote.ts).
import { describe, expect, test } from "bun:test";
import { Rng } from "../bench/load/prng.ts";
import { loadConfig } from "../src/config/load.ts";
import { runQuery } from "../src/indexes/query.ts";
import { storedJson } from "../src/nostr/canonical.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import { idf, termScore } from "../src/search/bm25.ts";
import { remoteWalks, searcher, searchPaths } from "../src/search/engine.ts";
import { eventTokens } from "../src/search/fields.ts";
import { FIRST_AT } from "../src/search/impact.ts";
import { removeBySerial } from "../src/store/lifecycle.ts";
import { searchStore } from "./search-store.ts";

const WORDS = ["gm", "nostr", "relay", "zap", "coffee", "bitcoin", "music", "art"];
const T = 1_700_000_000;
function suite(thread: boolean): void {
  let n = 0;
  const stored = new Map<string, { e: NostrEvent; serial: number }>();
  // The consumer applies only when a test says so.
  const config = loadConfig({ flags: { "consumers.intervalMs": "100000", "consumers.maxBatch": "1000000" } });
  const { s, d, ix, w, opts } = searchStore(`search-impact-${thread ? "thread-" : ""}`, config, thread);
  ix.highFrom = 0; // the corpus here is small: the lists are tried whatever the words' frequency
  ix.offloadFrom = 0; // and on the consumers' thread, every walk may go there

  /** Notes of 1 to `maxLen` words, some words repeated, created_at spread over few values (ties). */
  function notes(count: number, seed: number, maxLen: number): NostrEvent[] {
    const rng = new Rng(seed);
    const r = () => rng.float();
    return Array.from({ length: count }, () => {
      const len = 1 + Math.floor(r() * maxLen);
      const words = Array.from({ length: len }, () => WORDS[Math.floor(r() * r() * WORDS.length)]!);
      n++;
      return {
        id: n.toString(16).padStart(64, "0"),
        pubkey: "a".repeat(64),
        created_at: T + Math.floor(r() * 20),
        kind: 1,
        tags: [],
        content: words.join(" "),
        sig: "0".repeat(128),
      };
    });
  }

  async function put(events: NostrEvent[]): Promise<void> {
    const outcomes = await Promise.all(events.map((e) => w.submit(e, storedJson(e))));
    outcomes.forEach((o, i) => {
      if (o.status !== "stored") throw new Error(`not stored: ${JSON.stringify(o)}`);
      stored.set(events[i]!.id, { e: events[i]!, serial: o.serial });
    });
  }

  const answer = async (search: string, limit: number) =>
    ((await runQuery(s, [{ search, limit }], opts())) ?? []).map((j) => (JSON.parse(j) as NostrEvent).id);

  /** BM25 over the stored events, best first: score, then newer, then lower id. */
  function reference(search: string, limit: number): string[] {
    const words = [...new Set(search.split(" "))];
    const docs = [...stored.values()].map(({ e }) => {
      const tokens = eventTokens(e);
      const tf = new Map<string, number>();
      for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
      return { e, tf, length: tokens.length };
    });
    const avg = docs.reduce((a, x) => a + x.length, 0) / docs.length;
    const df = new Map(words.map((t) => [t, docs.filter((x) => x.tf.has(t)).length]));
    // the index sums the words rarest first (bm25.ts): the same order gives the same float sums
    const order = [...words].sort((a, b) => df.get(a)! - df.get(b)! || (a < b ? -1 : 1));
    const scored = docs
      .filter((x) => order.every((t) => x.tf.has(t)))
      .map((x) => ({
        e: x.e,
        score: order.reduce(
          (sum, t) => sum + termScore(idf(docs.length, df.get(t)!), x.tf.get(t)!, x.length, avg),
          0,
        ),
      }));
    scored.sort((a, b) => b.score - a.score || b.e.created_at - a.e.created_at || (a.e.id < b.e.id ? -1 : 1));
    return scored.slice(0, limit).map((x) => x.e.id);
  }

  const QUERIES = [
    "gm nostr",
    "nostr gm",
    "relay zap",
    "gm",
    "coffee bitcoin",
    "gm nostr relay",
    "art music",
    "zap",
  ];

  /** Every query at several limits equals the reference; returns how many were decided early. */
  async function checkAll(): Promise<number> {
    const before = searchPaths.high;
    const allBefore = searchPaths.all;
    const walks = remoteWalks.count;
    for (const q of QUERIES)
      for (const limit of [1, 7, 20, 100])
        expect({ q, limit, ids: await answer(q, limit) }).toEqual({ q, limit, ids: reference(q, limit) });
    // On the consumers' thread every walk ran there (nothing else was busy): one a search where
    // there are lists to try, and one for each search the lists did not decide (or had none to
    // try: a search never crosses for a walk of lists that do not exist); else none did.
    const tried = ix.impact().ref > 0 ? QUERIES.length * 4 : 0;
    const walked = tried + searchPaths.all - allBefore;
    expect(remoteWalks.count - walks).toBe(thread ? walked : 0);
    return searchPaths.high - before;
  }

  describe(`answers from the high-impact lists, ${thread ? "walked on the consumers' thread" : "in the main thread"}`, () => {
    test("below FIRST_AT documents there are no lists, and every search ranks all matches", async () => {
      await put(notes(FIRST_AT - 100, 1, 30));
      await d.runner.settle();
      expect(ix.impact().ref).toBe(0);
      expect(await checkAll()).toBe(0);
    });

    test("past it the lists are built; most searches of common words stop early, all exact", async () => {
      await put(notes(3000, 2, 30));
      await d.runner.settle();
      const { ref } = ix.impact();
      expect(ref).toBeGreaterThan(1);
      expect(await checkAll()).toBeGreaterThan(QUERIES.length); // at least a decided query per limit
    });

    test("with the consumer behind, the views' documents are ranked with the lists' ones", async () => {
      // short notes rank high: an answer decided early must include them though no list holds them
      await put(notes(300, 3, 4));
      expect(await checkAll()).toBeGreaterThan(0);
      await d.runner.settle();
      expect(await checkAll()).toBeGreaterThan(0);
    });

    test("removed documents leave every answer, before and after their postings are purged", async () => {
      const best = await answer("gm nostr", 100);
      for (const id of best.slice(0, 50)) {
        const { serial } = stored.get(id)!;
        await w.task((st) => removeBySerial(st, serial));
        stored.delete(id);
      }
      expect(await checkAll()).toBeGreaterThan(0); // removals still in the views
      await d.runner.settle();
      expect(await checkAll()).toBeGreaterThan(0); // listed gone in the index
      // The purge is set on the index that applies: this thread's (the consumers' thread holds its
      // own; it purges at the default, past these 50).
      if (!thread) {
        ix.purgeAt = 40; // purges up to twice as many at once: all 50
        await put(notes(10, 4, 30)); // a batch that purges
        await d.runner.settle();
        ix.purgeAt = 4096;
        expect(ix.goneSerials.size).toBe(0);
        expect(await checkAll()).toBeGreaterThan(0);
      }
    });

    test("a walk the other thread fails, or one too short to send, runs here to the same answer", async () => {
      const failing = searcher(ix, {
        ready: () => true,
        inFlight: () => 0,
        walk: () => Promise.reject(new Error("thread gone")),
      });
      const failed = remoteWalks.failed;
      for (const q of QUERIES) {
        const ids = (
          (await runQuery(s, [{ search: q, limit: 20 }], { ...opts(), search: failing })) ?? []
        ).map((j) => (JSON.parse(j) as NostrEvent).id);
        expect({ q, ids }).toEqual({ q, ids: reference(q, 20) });
      }
      expect(remoteWalks.failed - failed).toBeGreaterThanOrEqual(QUERIES.length);
      const walks = remoteWalks.count;
      ix.offloadFrom = Number.POSITIVE_INFINITY;
      try {
        for (const q of QUERIES) expect(await answer(q, 20)).toEqual(reference(q, 20));
      } finally {
        ix.offloadFrom = 0;
      }
      expect(remoteWalks.count).toBe(walks);
    });

    test("the lists are rebuilt at a new reference when the average length drifts and the corpus grows", async () => {
      const before = ix.impact();
      await put(notes(2 * before.docs, 5, 120)); // four times longer notes
      await d.runner.settle();
      const after = ix.impact();
      expect(after.ref).toBeGreaterThan(before.ref * 1.2);
      expect(after.docs).toBeGreaterThanOrEqual(1.25 * before.docs);
      await checkAll();
    });
  });
}

suite(false);
suite(true);
