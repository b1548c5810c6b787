// The search index and engine on a real LMDB store, without the network: postings and BM25
// statistics follow put and remove, ranking and cuts are exact, counts match the ranked results.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storedJson } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Filter } from "../nostr/filter.ts";
import type { QueryOptions } from "../store/query.ts";
import { countQuery, runQuery } from "../store/query.ts";
import type { Store } from "../store/store.ts";
import { flushIndexers, openStore, putEvent, removeEvent } from "../store/store.ts";
import type { SearchIndex } from "./indexer.ts";
import { tokenPrefix } from "./keys.ts";
import { reindex } from "./reindex.ts";
import { enableSearch } from "./setup.ts";

let dir: string;
let s: Store;
let ix: SearchIndex;
let n = 0;
const T = 1_700_000_000;
const PK_A = "a".repeat(64);
const PK_B = "b".repeat(64);

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

const serials = new Map<string, number>();
function put(...events: NostrEvent[]): void {
  s.env.transactionSync(() => {
    for (const e of events) {
      const serial = ++s.lastSerial;
      serials.set(e.id, serial);
      putEvent(s, e, storedJson(e), serial);
    }
    flushIndexers(s); // as the writer does at the end of every transaction
  });
}
function remove(e: NostrEvent): void {
  s.env.transactionSync(() => {
    removeEvent(s, e, serials.get(e.id)!);
    flushIndexers(s);
  });
}

const opts = (): QueryOptions => ({ hwm: s.lastSerial, defaultLimit: 100, maxLimit: 1000, yieldEvery: 16 });
const ids = async (...filters: Filter[]) =>
  ((await runQuery(s, filters, opts())) ?? []).map((j) => (JSON.parse(j) as NostrEvent).id);
const count = (...filters: Filter[]) => countQuery(s, filters, opts());

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "search-engine-"));
  s = openStore(dir);
  ix = enableSearch(s, () => {});
});
afterAll(async () => {
  await s.env.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("index statistics", () => {
  test("put adds postings, document frequencies and totals; remove takes them back exactly", () => {
    const before = ix.stats();
    const e = ev("zebra zebra yak");
    put(e);
    expect(ix.stats()).toEqual({ docs: before.docs + 1, totalLength: before.totalLength + 3 });
    expect(ix.docFrequencyOf(tokenPrefix("zebra"))).toBe(1);
    expect(ix.docFrequencyOf(tokenPrefix("yak"))).toBe(1);
    s.env.transactionSync(() => {
      ix.put(s, e, serials.get(e.id)!); // a second put of the same document changes nothing
      ix.flush();
    });
    expect(ix.stats().docs).toBe(before.docs + 1);
    expect(ix.docFrequencyOf(tokenPrefix("zebra"))).toBe(1);
    remove(e);
    expect(ix.stats()).toEqual(before);
    expect(ix.docFrequencyOf(tokenPrefix("zebra"))).toBe(0);
    s.env.transactionSync(() => {
      ix.remove(s, e, serials.get(e.id)!); // and a second remove too
      ix.flush();
    });
    expect(ix.stats()).toEqual(before);
  });

  test("kinds without searchable text are not indexed", () => {
    const before = ix.stats();
    put(ev("zebra", { kind: 7 }), ev("zebra", { kind: 3 }));
    expect(ix.stats()).toEqual(before);
    expect(ix.docFrequencyOf(tokenPrefix("zebra"))).toBe(0);
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

  beforeAll(() => put(many, short, long, tieX, tieY, tieOld, commonHeavy, rareHeavy, ...fillers));

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

  test("since/until bound the postings scan; kinds are checked on the posting", async () => {
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
});

describe("pruning", () => {
  test("the pruned top-k equals the full ranking cut at k, ties included", async () => {
    // 900 documents with both words, varied counts and lengths, many exact ties, two authors
    const docs = Array.from({ length: 900 }, (_, i) =>
      ev(`${"alpha ".repeat(1 + (i % 3))}${"beta ".repeat(1 + (i % 2))}${"pad ".repeat(i % 7)}`, {
        created_at: T + (i % 5),
        pubkey: i % 2 ? PK_A : PK_B,
      }),
    );
    put(...docs);
    for (const limit of [1, 5, 20, 100]) {
      // authors makes every candidate need its event, which turns pruning off: the reference
      const full = await ids({ search: "alpha beta", authors: [PK_A, PK_B], limit });
      expect(full).toHaveLength(limit);
      expect(await ids({ search: "alpha beta", limit })).toEqual(full);
      expect(await ids({ search: "beta alpha pad", limit })).toEqual(
        await ids({ search: "beta alpha pad", authors: [PK_A, PK_B], limit }),
      );
    }
    expect(await count({ search: "alpha beta" })).toBe(900);
  });
});

describe("reindex", () => {
  test("a rebuild from the stored events gives the same index", async () => {
    put(ev("rebuild probe", { pubkey: PK_B }));
    const stats = ix.stats();
    const before = await ids({ search: "common" });
    const r = reindex(s, ix, 7);
    expect(r.docs).toBe(stats.docs);
    expect(ix.stats()).toEqual(stats);
    expect(ix.isCurrent()).toBe(true);
    expect(await ids({ search: "common" })).toEqual(before);
    expect(await ids({ search: "rebuild", authors: [PK_B] })).toHaveLength(1);
  });
});
