// The search consumer and engine on a real LMDB store, through the writer and the consumer
// runner as the relay wires them, without the network: postings and BM25 statistics follow
// stores and removals, ranking and cuts are exact, counts match the ranked results, and every
// answer is the same whether the consumer has applied the events yet or not.
import { beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../src/config/load.ts";
import { countQuery, runQuery } from "../src/indexes/query.ts";
import { storedJson } from "../src/nostr/canonical.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import type { Filter } from "../src/nostr/filter.ts";
import { matchFilter } from "../src/nostr/filter.ts";
import { BLOCK_BYTES, decodeBlock, tokenBounds, tokenPrefix } from "../src/search/blocks.ts";
import { Candidates, rankOrder, select } from "../src/search/candidates.ts";
import { matchSearch } from "../src/search/match.ts";
import { PostingStream } from "../src/search/postings.ts";
import { removeBySerial } from "../src/store/lifecycle.ts";
import { searchStore } from "./search-store.ts";

let n = 0;
const T = 1_700_000_000;
const PK_A = "a".repeat(64);
const PK_B = "b".repeat(64);
// Applied only when a test says so: every answer below must hold with the consumer behind.
const config = loadConfig({ flags: { "consumers.intervalMs": "100000", "consumers.maxBatch": "1000000" } });
const { s, d, ix, w, opts } = searchStore("search-engine-", config);

function ev(content: string, t: Partial<NostrEvent> = {}): NostrEvent {
  n++;
  return {
    id: n.toString(16).padStart(64, "0"),
    pubkey: PK_A,
    created_at: T,
    kind: 1,
    tags: [],
    content,
    sig: "0".repeat(128),
    ...t,
  };
}

/** A seeded draw in [0, k): the same sequence on every run. */
function seeded(seed: number): (k: number) => number {
  return (k) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % k;
  };
}

const serials = new Map<string, number>();
const stored: NostrEvent[] = [];
async function put(...events: NostrEvent[]): Promise<void> {
  const outcomes = await Promise.all(events.map((e) => w.submit(e, storedJson(e))));
  outcomes.forEach((o, i) => {
    if (o.status !== "stored") throw new Error(`not stored: ${JSON.stringify(o)}`);
    serials.set(events[i]!.id, o.serial);
    stored.push(events[i]!);
  });
}
async function remove(e: NostrEvent): Promise<void> {
  await w.task((st) => removeBySerial(st, serials.get(e.id)!));
  stored.splice(stored.indexOf(e), 1);
}
const apply = () => d.runner.settle();

const ids = async (...filters: Filter[]) =>
  ((await runQuery(s, filters, opts())) ?? []).map((j) => (JSON.parse(j) as NostrEvent).id);
const count = (...filters: Filter[]) => countQuery(s, filters, opts());
const stats = () => {
  const snap = ix.snapshot();
  return { docs: snap.docs, totalLength: snap.totalLength };
};
const df = (token: string) => ix.docFrequency(ix.snapshot(), token);
/** Postings physically in a token's blocks, and how many blocks. */
function postingsOf(token: string): { postings: number; blocks: number } {
  const { start, end } = tokenBounds(tokenPrefix(token));
  let postings = 0;
  let blocks = 0;
  for (const { value } of ix.blocks.getRange({ start, end })) {
    postings += decodeBlock(value as Buffer).length;
    blocks++;
  }
  return { postings, blocks };
}
/** The naive answer: every stored event matching, as a set. */
const oracle = (f: Filter) =>
  stored
    .filter((e) => matchFilter(f, e, matchSearch))
    .map((e) => e.id)
    .sort();

describe("index statistics", () => {
  test("a store adds documents, frequencies and totals; a removal takes them back exactly", async () => {
    const before = stats();
    const e = ev("zebra zebra yak");
    await put(e);
    expect(stats()).toEqual({ docs: before.docs + 1, totalLength: before.totalLength + 3 });
    expect(df("zebra")).toBe(1);
    await apply();
    expect(stats()).toEqual({ docs: before.docs + 1, totalLength: before.totalLength + 3 });
    expect(df("zebra")).toBe(1);
    expect(ix.storedDf(tokenPrefix("yak"))).toBe(1);
    await remove(e);
    expect(stats()).toEqual(before);
    expect(df("zebra")).toBe(0);
    await apply();
    expect(stats()).toEqual(before);
    expect(df("zebra")).toBe(0);
    expect(ix.storedDf(tokenPrefix("zebra"))).toBe(0);
  });

  test("an event stored and removed before the consumer applies it leaves nothing", async () => {
    const before = stats();
    const e = ev("ephemeralword");
    await put(e);
    await remove(e);
    expect(df("ephemeralword")).toBe(0);
    await apply();
    expect(stats()).toEqual(before);
    expect(ix.storedDf(tokenPrefix("ephemeralword"))).toBe(0);
  });

  test("kinds without searchable text are not indexed", async () => {
    const before = stats();
    await put(ev("zebra", { kind: 7 }), ev("zebra", { kind: 3 }));
    await apply();
    expect(stats()).toEqual(before);
    expect(df("zebra")).toBe(0);
  });
});

describe("ranking", () => {
  const many = ev("bitcoin bitcoin bitcoin", { created_at: T + 1 });
  const short = ev("bitcoin lightning", { created_at: T + 2 });
  const long = ev("bitcoin and a lot of other words that make this note long", { created_at: T + 3 });
  // two identical notes at one second: tie broken by id
  const tieX = ev("ranking tie probe", { created_at: T + 5 });
  const tieY = ev("ranking tie probe", { created_at: T + 5 });
  const tieOld = ev("ranking tie probe", { created_at: T + 4 });
  // "rare" occurs in few documents, "common" in many: the rare word's repeats count more
  const commonHeavy = ev("common common rare", { created_at: T + 6 });
  const rareHeavy = ev("common rare rare", { created_at: T + 6 });
  const fillers = Array.from({ length: 20 }, (_, i) => ev(`common filler ${i}`, { created_at: T }));

  beforeAll(async () => {
    await put(many, short, long, tieX, tieY, tieOld, commonHeavy, rareHeavy, ...fillers);
    await apply();
  });

  test("higher term frequency first, then shorter documents", async () => {
    expect(await ids({ search: "bitcoin" })).toEqual([many.id, short.id, long.id]);
  });

  test("a rarer word counts more than a common one", async () => {
    expect(await ids({ search: "rare common" })).toEqual([rareHeavy.id, commonHeavy.id]);
  });

  test("equal scores: newest first, then lowest id; limit applies after ranking", async () => {
    expect(await ids({ search: "ranking probe" })).toEqual([tieX.id, tieY.id, tieOld.id]);
    expect(await ids({ search: "ranking probe", limit: 1 })).toEqual([tieX.id]);
    expect(await ids({ search: "bitcoin", limit: 2 })).toEqual([many.id, short.id]);
  });

  test("every word must be present", async () => {
    expect(await ids({ search: "bitcoin lightning" })).toEqual([short.id]);
    expect(await ids({ search: "bitcoin unicorn" })).toEqual([]);
    expect(await ids({ search: "include:spam" })).toEqual([]);
  });

  test("since and until are checked on the postings; so are kinds", async () => {
    expect(await ids({ search: "bitcoin", since: T + 2 })).toEqual([short.id, long.id]);
    expect(await ids({ search: "bitcoin", until: T + 2 })).toEqual([many.id, short.id]);
    expect(await ids({ search: "bitcoin", kinds: [30023] })).toEqual([]);
    expect(await ids({ search: "bitcoin", kinds: [] })).toEqual([]);
  });

  test("count equals the number of ranked results, and filters are unioned once", async () => {
    expect(await count({ search: "bitcoin" })).toBe(3);
    expect(await count({ search: "common" })).toBe(22);
    expect(await count({ search: "bitcoin" }, { search: "lightning" })).toBe(3);
    expect(await count({ search: "bitcoin" }, { ids: [many.id] })).toBe(3);
  });

  test("several filters keep each filter's order, each event once", async () => {
    expect(await ids({ search: "lightning" }, { search: "bitcoin" })).toEqual([short.id, many.id, long.id]);
  });

  test("events above the high-water mark and hidden serials are not seen", async () => {
    const o = { ...opts(), hwm: serials.get(short.id)! };
    const r = (await runQuery(s, [{ search: "bitcoin" }], o))!.map((j) => (JSON.parse(j) as NostrEvent).id);
    expect(r).toEqual([many.id, short.id]);
    const hidden = { ...opts(), hidden: (x: number) => x === serials.get(many.id) };
    expect(await countQuery(s, [{ search: "bitcoin" }], hidden)).toBe(2);
  });

  test("without a search engine a search filter matches nothing", async () => {
    expect(await runQuery(s, [{ search: "bitcoin" }], { ...opts(), search: undefined })).toEqual([]);
  });
});

describe("the top-k cut", () => {
  test("the cut at k equals the full ranking cut at k, ties included", async () => {
    // 900 documents with both words, varied counts and lengths, many exact ties, two authors
    const docs = Array.from({ length: 900 }, (_, i) =>
      ev(`${"alpha ".repeat(1 + (i % 3))}${"beta ".repeat(1 + (i % 2))}${"pad ".repeat(i % 7)}`, {
        created_at: T + (i % 5),
        pubkey: i % 2 ? PK_A : PK_B,
      }),
    );
    await put(...docs);
    for (const applied of [false, true]) {
      if (applied) await apply();
      for (const limit of [1, 5, 20, 100]) {
        // authors makes every candidate need its event, so nothing is cut early: the reference
        const full = await ids({ search: "alpha beta", authors: [PK_A, PK_B], limit });
        expect(full).toHaveLength(limit);
        expect(await ids({ search: "alpha beta", limit })).toEqual(full);
      }
      expect(await count({ search: "alpha beta" })).toBe(900);
    }
  });

  test("a ranked search keeps every candidate tied with the best it needs: of equal scores the newest win", async () => {
    // 400 documents of one score, each newer than the one before: the best 5 are the last 5
    // stored, met after the walk already holds more than the 5 it ranks.
    const docs = Array.from({ length: 400 }, (_, i) => ev("gamma delta", { created_at: T + 1000 + i }));
    await put(...docs);
    const newest = docs
      .slice(-5)
      .reverse()
      .map((e) => e.id);
    for (const applied of [false, true]) {
      if (applied) await apply();
      expect(await ids({ search: "gamma delta", limit: 5 })).toEqual(newest);
      expect(await ids({ search: "delta gamma", limit: 5 })).toEqual(newest);
    }
  });
});

describe("blocks", () => {
  test("postings spread over many blocks stay exact through purges in early, middle and last blocks", async () => {
    ix.purgeAt = 4; // purge once four removed documents wait
    // 7 bytes a posting (narrow columns: blocks.ts): ~3.5 blocks of one token, and each half
    // (odd, even) under the store's maxLimit of 1,000 results
    const per = 2 * Math.floor((BLOCK_BYTES / 7) * 1.73);
    const docs = Array.from({ length: per }, (_, i) =>
      ev(`blockword ${i % 2 ? "odd" : "even"} tick${i % 13}`, { created_at: T + (i % 97) }),
    );
    await put(...docs.slice(0, per / 2));
    await apply();
    await put(...docs.slice(per / 2));
    await apply();
    expect(ix.storedDf(tokenPrefix("blockword"))).toBe(per);
    expect(postingsOf("blockword").postings).toBe(per);
    expect(postingsOf("blockword").blocks).toBeGreaterThan(3);
    const gone = [docs[0]!, docs[1]!, docs[7]!, docs[per / 2]!, docs[per - 1]!, docs[per - 3]!];
    for (const e of gone) await remove(e);
    // removals pending: the views hide them
    expect(await count({ search: "blockword" })).toBe(per - gone.length);
    expect((await ids({ search: "blockword odd", limit: 5000 })).sort()).toEqual(
      oracle({ search: "blockword odd" }),
    );
    await apply();
    expect(ix.goneSerials.size).toBe(0); // six waited: purged, blocks rewritten
    expect(ix.storedDf(tokenPrefix("blockword"))).toBe(per - gone.length);
    expect(postingsOf("blockword").postings).toBe(per - gone.length);
    expect(await count({ search: "blockword" })).toBe(per - gone.length);
    expect((await ids({ search: "blockword tick5", limit: 5000 })).sort()).toEqual(
      oracle({ search: "blockword tick5" }),
    );
    expect((await ids({ search: "even tick4", since: T + 10, until: T + 50, limit: 5000 })).sort()).toEqual(
      oracle({ search: "even tick4", since: T + 10, until: T + 50 }),
    );
    // One block per read and a yield every two: seeks cross read groups and turns.
    PostingStream.groupSize = 1;
    try {
      for (const q of ["blockword tick5", "tick5 blockword odd", "even tick12", "odd"]) {
        expect((await ids({ search: q, limit: 5000 })).sort()).toEqual(oracle({ search: q }));
        expect(await count({ search: q })).toBe(oracle({ search: q }).length);
      }
    } finally {
      PostingStream.groupSize = 32;
    }
  });
});

describe("purges", () => {
  test("a purge by sweep, a slice per batch, leaves exactly what a purge by token does, and answers stay exact meanwhile", async () => {
    // Many small blocks (a few postings each) over a few words: a sweep spans several batches.
    ix.blockBytes = 96;
    ix.purgeAt = 8;
    const words = ["swa", "swb", "swc", "swd"];
    const rand = seeded(11);
    const make = (n: number, tag: string) =>
      Array.from({ length: n }, (_, i) =>
        ev(`${tag} ${words.filter(() => rand(2) === 0).join(" ") || "swa"} sw${i % 5}`, {
          created_at: T + 5000 + rand(50),
        }),
      );
    const check = async () => {
      for (const q of ["swa", "swb swc", "sw3", "sweepa", "sweepb swd"]) {
        expect({ q, ids: (await ids({ search: q, limit: 5000 })).sort() }).toEqual({
          q,
          ids: oracle({ search: q }),
        });
        expect({ q, n: await count({ search: q }) }).toEqual({ q, n: oracle({ search: q }).length });
      }
    };
    const postingsAll = () =>
      [...words, "sw0", "sw1", "sw2", "sw3", "sw4"].map((w) => postingsOf(w).postings);
    try {
      for (const [path, when, slice] of [
        ["sweep", Number.POSITIVE_INFINITY, 1],
        ["token", 0, 1],
      ] as const) {
        ix.sweepWhen = when;
        ix.sweepSliceBytes = slice;
        ix.sweepChunk = 3; // three blocks a read, one read a batch: the chunk's last block waits for the next
        let batches = 0;
        const docs = make(300, path === "sweep" ? "sweepa" : "sweepb");
        await put(...docs);
        await apply();
        const before = postingsAll();
        const gone = docs.filter((_, i) => i % 3 === 0).slice(0, 12);
        for (const e of gone) await remove(e);
        await apply();
        // The sweep reads a chunk of blocks per batch: still under way, its documents still gone.
        expect({ path, sweeping: ix.sweeping }).toEqual({ path, sweeping: path === "sweep" });
        await check();
        for (let i = 0; i < 500 && ix.sweeping; i++) {
          batches++;
          await put(ev(`filler ${path} ${i}`, { created_at: T + 9000 + i }));
          await apply();
          await check();
        }
        expect({ path, sweeping: ix.sweeping, gone: ix.goneSerials.size }).toEqual({
          path,
          sweeping: false,
          gone: 0,
        });
        // A sixteenth of the blocks a batch at least (SWEEP_SLICES), in chunks of three.
        if (path === "sweep") expect(batches).toBeGreaterThan(5);
        // Each removed document's postings are out of every word's blocks, and only they.
        const removedPerWord = [...words, "sw0", "sw1", "sw2", "sw3", "sw4"].map(
          (w) => gone.filter((e) => e.content.split(" ").includes(w)).length,
        );
        expect(postingsAll()).toEqual(before.map((n, i) => n - removedPerWord[i]!));
        await check();
      }
    } finally {
      ix.blockBytes = BLOCK_BYTES;
      ix.purgeAt = 4096;
      ix.sweepWhen = 8;
      ix.sweepSliceBytes = 8 * 2 ** 20;
      ix.sweepChunk = undefined;
    }
  });
});

describe("many small blocks", () => {
  test("intersections seek across block, read-group and turn boundaries exactly", async () => {
    // A posting or two a block, a block a read: every step of a walk crosses a boundary.
    ix.blockBytes = 64;
    PostingStream.groupSize = 1;
    try {
      const vocab = ["zeta", "eta", "theta", "iota", "kappa", "lambda"];
      const rand = seeded(5);
      const docs = Array.from({ length: 500 }, () =>
        ev(Array.from({ length: 1 + rand(5) }, () => vocab[rand(vocab.length)]).join(" "), {
          created_at: T + rand(30),
        }),
      );
      for (let i = 0; i < docs.length; i += 100) {
        await put(...docs.slice(i, i + 100));
        await apply();
      }
      expect(postingsOf("zeta").blocks).toBeGreaterThan(100);
      for (const e of docs.filter((_, i) => i % 11 === 5)) await remove(e);
      const queries = ["zeta", "zeta eta", "theta iota kappa", "lambda zeta", "eta kappa lambda iota"];
      for (const applied of [false, true]) {
        if (applied) await apply();
        for (const q of queries) {
          expect([q, (await ids({ search: q, limit: 1000 })).sort()]).toEqual([q, oracle({ search: q })]);
          expect([q, await count({ search: q })]).toEqual([q, oracle({ search: q }).length]);
          const f = { search: q, since: T + 5, until: T + 20 };
          expect([q, (await ids({ ...f, limit: 1000 })).sort()]).toEqual([q, oracle(f)]);
        }
      }
    } finally {
      ix.blockBytes = BLOCK_BYTES;
      PostingStream.groupSize = 32;
    }
  });
});

describe("two words at block edges", () => {
  test("a word's next block whose last posting is the other word's current one is entered", async () => {
    // Three postings a block (64 bytes: a 40-byte header and 7-byte narrow postings). With
    // `lead` the rarer word: [1 2 3] [5 6 7] and `other` [1 7 8 9 10 11 12], the lead's first
    // block ends below 7, and its next block ends exactly at 7. Then the same shape with the
    // commoner word's block ending at the lead's posting: [1 2 3] [5 6 7] against [1 7].
    ix.blockBytes = 64;
    try {
      const docs = (a: string, b: string, tail: number) => [
        ev(`${a} ${b}`),
        ev(a),
        ev(a),
        ev("edgefill"),
        ev(a),
        ev(a),
        ev(`${a} ${b}`),
        ...Array.from({ length: tail }, () => ev(b)),
      ];
      const first = docs("edgelead", "edgeother", 5);
      const second = docs("edgecommon", "edgerare", 0);
      await put(...first, ...second);
      await apply();
      for (const w of ["edgelead", "edgecommon"]) expect(postingsOf(w)).toEqual({ postings: 6, blocks: 2 });
      for (const [q, set] of [
        ["edgelead edgeother", first],
        ["edgecommon edgerare", second],
      ] as const) {
        const want = [set[0]!.id, set[6]!.id].sort();
        expect([q, (await ids({ search: q, limit: 10 })).sort()]).toEqual([q, want]);
        expect([q, await count({ search: q })]).toEqual([q, 2]);
      }
    } finally {
      ix.blockBytes = BLOCK_BYTES;
    }
  });
});

describe("ranking: selection of the cut", () => {
  test("candidates kept for the best k rank as every candidate does, ties at the floor included", () => {
    const rand = seeded(3);
    for (let round = 0; round < 300; round++) {
      const n = 1 + rand(2000);
      const keep = 1 + rand(60);
      // few distinct scores and times: long runs of ties at the cut
      const spread = 1 + rand(round % 2 === 0 ? 4 : 500);
      const all = Candidates.take();
      const kept = Candidates.take();
      kept.keepBest(keep);
      for (let serial = 1; serial <= n; serial++) {
        const time = T + rand(1 + (round % 5));
        const score = rand(spread) / 3;
        all.push(serial, time, score);
        kept.push(serial, time, score);
      }
      // The best `keep` in rank order, with every candidate tied with the last of them (score
      // and created_at): what the engine may load before its cut.
      const serialsOf = (c: Candidates) => {
        const order = rankOrder(c, keep);
        let end = Math.min(keep, order.length);
        const last = order[end - 1]!;
        while (
          end < order.length &&
          c.score[order[end]!] === c.score[last] &&
          c.time[order[end]!] === c.time[last]
        )
          end++;
        return order.slice(0, end).map((k) => c.serial[k]!);
      };
      expect([round, serialsOf(kept)]).toEqual([round, serialsOf(all)]);
      all.release();
      kept.release();
    }
  });

  test("select() finds the value sorting puts at each position, duplicates and all", () => {
    const rand = seeded(11);
    for (let round = 0; round < 300; round++) {
      const n = 1 + rand(300);
      const spread = 1 + rand(round % 2 === 0 ? 5 : 1000);
      const values = Float64Array.from({ length: n }, () => rand(spread) / 7);
      if (round % 3 === 1) values.sort(); // already sorted, and reversed below
      if (round % 6 === 4) values.reverse();
      const sorted = Float64Array.from(values).sort();
      const at = rand(n);
      expect([round, select(Float64Array.from(values), at)]).toEqual([round, sorted[at]!]);
    }
  });
});

describe("lagging and caught up", () => {
  test("answers with the consumer behind equal the answers once it has caught up", async () => {
    const words = ["sun", "moon", "star", "comet", "orbit", "nova", "dust", "ring"];
    const rand = seeded(7);
    const docs = Array.from({ length: 400 }, () => {
      const len = 1 + rand(9);
      const text = Array.from({ length: len }, () => words[rand(words.length)]).join(" ");
      const article = rand(5) === 0;
      return ev(text, {
        created_at: T + rand(50),
        kind: article ? 30023 : 1,
        tags: article ? [["d", `d${n}`]] : [],
      });
    });
    await put(...docs.slice(0, 200));
    await apply();
    await put(...docs.slice(200));
    for (const e of docs.filter((_, i) => i % 17 === 3)) await remove(e);
    const queries: Filter[] = [
      { search: "sun moon" },
      { search: "star", limit: 7 },
      { search: "comet orbit nova", limit: 3 },
      { search: "dust", kinds: [30023] },
      { search: "ring sun", since: T + 10, until: T + 30 },
    ];
    const lagging = [];
    for (const q of queries) lagging.push({ ids: await ids(q), count: await count(q) });
    expect(d.runner.lag()[0]!.events).toBeGreaterThan(0);
    await apply();
    expect(d.runner.lag()[0]!.events).toBe(0);
    for (const [i, q] of queries.entries()) {
      expect(await ids(q)).toEqual(lagging[i]!.ids);
      expect(await count(q)).toBe(lagging[i]!.count);
      expect(lagging[i]!.count).toBe(oracle(q).length);
    }
  });
});

describe("rebuild", () => {
  test("rebuilding from the stored events gives the same index", async () => {
    await put(ev("rebuild probe", { pubkey: PK_B }));
    await apply();
    const before = { stats: stats(), common: await ids({ search: "common" }), df: df("alpha") };
    s.state.putSync(Buffer.from("consumer:search"), Buffer.alloc(28)); // as `relay reindex` marks it
    d.runner.catchUp(undefined, 7);
    expect(stats()).toEqual(before.stats);
    expect(df("alpha")).toBe(before.df);
    expect(await ids({ search: "common" })).toEqual(before.common);
    expect(await ids({ search: "rebuild", authors: [PK_B] })).toHaveLength(1);
  });
});
