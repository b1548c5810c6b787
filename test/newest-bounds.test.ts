// The pubkind ranges' newest-entry bounds (newest.ts) and the merge that defers ranges by them
// (cursor.ts): a deferred merge gives the same sequence as an open one, never opens a range too
// old for what was taken, and a bound learned while an event is being stored cannot hide it.
import { describe, expect, test } from "bun:test";
import { loadConfig } from "../src/config/load.ts";
import { openConsumers } from "../src/consumers/registry.ts";
import { MergedScan } from "../src/indexes/cursor.ts";
import { keepNewest, newestOf } from "../src/indexes/newest.ts";
import { runQuery } from "../src/indexes/query.ts";
import { computeId, storedJson } from "../src/nostr/canonical.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import type { Filter } from "../src/nostr/filter.ts";
import { hexBytes, pubkindPrefix } from "../src/store/keys.ts";
import { closeStore, openStore } from "../src/store/store.ts";
import type { Indexer, Store } from "../src/store/types.ts";
import { Writer } from "../src/store/writer.ts";
import { mulberry32 } from "./gen.ts";
import { tempDir } from "./harness.ts";

/** Consumers that apply only when the test settles them. */
const LAGGING = loadConfig({ flags: { "consumers.intervalMs": "1000000", "consumers.maxBatch": "1000000" } });
const T0 = 1_700_000_000;
const options = { hwm: Number.MAX_SAFE_INTEGER, defaultLimit: 100, maxLimit: 500, yieldEvery: 512 };

const pubkeyOf = (n: number): string => n.toString(16).padStart(64, "0");

function note(pubkey: string, kind: number, created_at: number, content = ""): NostrEvent {
  const e: NostrEvent = { id: "", pubkey, created_at, kind, tags: [], content, sig: "0".repeat(128) };
  e.id = computeId(e);
  return e;
}

async function withStore(run: (s: Store, writer: Writer, settle: () => Promise<void>) => Promise<void>) {
  const s = openStore(tempDir("newest-"));
  const consumers = openConsumers(s, LAGGING, { log: () => {} });
  const writer = new Writer(s, 256, (st, rm) => consumers.runner.committed(st, rm));
  try {
    await run(s, writer, () => consumers.runner.settle());
  } finally {
    await writer.drain();
    await consumers.runner.stop();
    await closeStore(s);
  }
}

/** Stores events; each is stored, unless a newer version of its replaceable kind already is. */
const store = async (writer: Writer, events: NostrEvent[]): Promise<void> => {
  const out = await Promise.all(events.map((e) => writer.submit(e, storedJson(e))));
  out.forEach((o, i) => {
    if (o.status !== "stored")
      expect(`${events[i]!.kind} ${o.status === "rejected" ? o.reject.message : o.status}`).toBe(
        "0 have a newer version of this replaceable event",
      );
  });
};

const idsOf = (jsons: readonly string[]): string[] => jsons.map((j) => (JSON.parse(j) as NostrEvent).id);

describe("a merge that defers ranges by their newest bound", () => {
  test("gives the open merge's sequence, and opens no range whose bound is below what it gave", async () => {
    await withStore(async (s, writer, settle) => {
      const draw = mulberry32(7);
      const authors = Array.from({ length: 12 }, (_, i) => pubkeyOf(i + 1));
      const events: NostrEvent[] = [];
      // Ranges of 0 to 30 entries; seconds shared between ranges, so ties cross them.
      for (const a of authors.slice(0, 10)) {
        const n = Math.floor(draw() * 31);
        for (let k = 0; k < n; k++) events.push(note(a, 1, T0 + Math.floor(draw() * 50), `${a}${k}`));
      }
      await store(writer, events);
      await settle();
      const prefixes = authors.map((a) => pubkindPrefix(hexBytes(a), 1));
      const newest = authors.map((a) =>
        Math.max(-1, ...events.filter((e) => e.pubkey === a).map((e) => e.created_at)),
      );
      const all = (bounds?: (number | undefined)[]) => {
        const opened: number[] = [];
        const scan = new MergedScan(s.pubkind, prefixes, 0, Number.MAX_SAFE_INTEGER, 8, "newest", {
          above: bounds ?? [],
          seen: (i) => opened.push(i),
        });
        return { scan, opened };
      };
      const open = all();
      const want: string[] = [];
      for (let k = open.scan.next(); k; k = open.scan.next()) want.push(`${k.time}:${k.serial}`);
      expect(want.length).toBe(events.length);
      for (let round = 0; round < 200; round++) {
        // Exact bounds, looser ones, none, and some ranges with nothing at all.
        const bounds = newest.map((t) => {
          const r = draw();
          return r < 0.2 ? undefined : r < 0.6 ? t : t + Math.floor(draw() * 20);
        });
        const take = Math.floor(draw() * (want.length + 2));
        const { scan, opened } = all(bounds);
        const got: string[] = [];
        let last = Number.MAX_SAFE_INTEGER;
        for (
          let k = got.length < take ? scan.next() : undefined;
          k;
          k = got.length < take ? scan.next() : undefined
        ) {
          got.push(`${k.time}:${k.serial}`);
          last = k.time;
        }
        expect(got).toEqual(want.slice(0, take));
        // A range is opened once the merge has reached its bound, never before: none whose
        // bound is below the last second given (unless the merge was asked past its end).
        if (take > 0 && take <= want.length)
          for (let i = 0; i < prefixes.length; i++) {
            const b = bounds[i];
            if (b !== undefined && b < last) expect(opened).not.toContain(i);
          }
      }
    });
  });

  test("never opens a range whose bound is below since", async () => {
    await withStore(async (s, writer, settle) => {
      const a = pubkeyOf(1);
      const b = pubkeyOf(2);
      await store(writer, [note(a, 1, T0 + 5), note(b, 1, T0 + 20)]);
      await settle();
      const prefixes = [a, b].map((x) => pubkindPrefix(hexBytes(x), 1));
      // The ranges read, as the index database is asked for them.
      const read: string[] = [];
      const db = new Proxy(s.pubkind, {
        get: (target, key) => {
          const v = Reflect.get(target, key);
          if (key !== "getValues") return typeof v === "function" ? v.bind(target) : v;
          return (prefix: Buffer, o: unknown) => {
            read.push(prefix.toString("hex"));
            return v.call(target, prefix, o);
          };
        },
      });
      const scan = new MergedScan(db, prefixes, T0 + 10, Number.MAX_SAFE_INTEGER, 8, "newest", {
        above: [T0 + 5, undefined],
      });
      expect(scan.next()?.time).toBe(T0 + 20);
      expect(scan.next()).toBeUndefined();
      expect(read).toEqual([prefixes[1]!.toString("hex")]);
    });
  });
});

describe("the bounds a relay keeps", () => {
  test("a home feed answers the same with and without them, through new events, deletions and replacements", async () => {
    await withStore(async (s, writer, settle) => {
      const draw = mulberry32(11);
      const authors = Array.from({ length: 30 }, (_, i) => pubkeyOf(i + 100));
      const seq = { n: 0 };
      const make = (kinds: readonly number[]) => {
        const a = authors[Math.floor(draw() * authors.length)]!;
        const kind = kinds[Math.floor(draw() * kinds.length)]!;
        return note(a, kind, T0 + Math.floor(draw() * 400), `n${seq.n++}`);
      };
      const feed: Filter = { authors, kinds: [0, 1, 6], limit: 10 };
      const check = async () => {
        // The same store read without bounds: a second Store object is not kept by keepNewest.
        const bare = openStore(s.path);
        try {
          const o = { ...options, hwm: writer.visibleSerial };
          for (const limit of [1, 3, 10, 40]) {
            for (const f of [feed, { ...feed, authors: authors.slice(0, 7) }, { ...feed, since: T0 + 200 }]) {
              const withBounds = idsOf((await runQuery(s, [{ ...f, limit }], o))!);
              const without = idsOf((await runQuery(bare, [{ ...f, limit }], o))!);
              expect(withBounds).toEqual(without);
            }
          }
        } finally {
          await closeStore(bare);
        }
      };
      keepNewest(s);
      for (let round = 0; round < 8; round++) {
        await store(
          writer,
          Array.from({ length: 60 }, () => make([0, 1, 1, 6, 7])),
        );
        await check(); // the new events in the views
        await settle();
        await check(); // all indexed
        // A deletion (kind 5) of some of an author's notes leaves their bounds too high only.
        const victim = authors[round]!;
        const targets = (await runQuery(s, [{ authors: [victim], kinds: [1], limit: 3 }], options))!;
        const del = note(victim, 5, T0 + 500 + round);
        del.tags = idsOf(targets).map((id) => ["e", id]);
        del.id = computeId(del);
        await store(writer, [del]);
        await settle();
        await check();
      }
      expect(newestOf(s)).toBeDefined();
    });
  });

  test("a read while an event is being stored learns nothing that would hide it", async () => {
    await withStore(async (s, writer, settle) => {
      const x = pubkeyOf(1);
      const y = pubkeyOf(2);
      await store(writer, [note(x, 1, T0 + 100), note(y, 1, T0 + 150), note(y, 1, T0 + 140)]);
      await settle();
      keepNewest(s);
      const feed: Filter[] = [{ authors: [x, y], kinds: [1], limit: 1 }];
      // A REQ run in the write transaction that stores x's newer note, before that note reaches
      // the consumers' views: the worst moment to learn x's newest from the index (both ranges
      // are unknown, so the REQ opens and would learn both).
      let readInside = false;
      const reader: Indexer = {
        name: "reader",
        put: () => {
          void runQuery(s, feed, options);
          readInside = true;
        },
        remove: () => {},
        seen: () => {},
      };
      s.indexers.push(reader);
      const newer = note(x, 1, T0 + 200);
      await store(writer, [newer]);
      s.indexers.pop();
      expect(readInside).toBe(true);
      await settle();
      // Indexed now: with x's bound left at 100 it would be deferred behind y's 150 and missed.
      expect(idsOf((await runQuery(s, feed, options))!)).toEqual([newer.id]);
    });
  });
});
