// Differential fuzz of the store against the naive matcher. A seeded stream of events (few
// authors, kinds, tag values and seconds, so replacements and created_at ties are common) goes
// through the real Writer into LMDB and into an in-memory model that applies the NIP-01
// replaceable/addressable rules directly. Random filter sets then go through runQuery and
// countQuery and through matchFilter over the model, and must give the same ordered ids and counts,
// with the REQ indexes behind the log, partly caught up and caught up, and handed over to
// another process (read from the log past their watermark) and taken back.
// FUZZ_SEED=<n> replays one seed; FUZZ_SEEDS=<k> runs k consecutive seeds from it.
import { describe, expect, test } from "bun:test";
import { loadConfig } from "../src/config/load.ts";
import { openConsumers } from "../src/consumers/registry.ts";
import { keepNewest } from "../src/indexes/newest.ts";
import type { QueryOptions } from "../src/indexes/query.ts";
import { countQuery, runQuery } from "../src/indexes/query.ts";
import { computeId, STORED_ID_OFFSET, storedJson } from "../src/nostr/canonical.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import type { Filter } from "../src/nostr/filter.ts";
import { matchFilter } from "../src/nostr/filter.ts";
import type { WriteOutcome } from "../src/store/batch.ts";
import { closeStore, openStore } from "../src/store/store.ts";
import type { Store } from "../src/store/types.ts";
import { Writer } from "../src/store/writer.ts";
import { eventFrame, eventPrefix } from "../src/wire/frames.ts";
import { Gen } from "./gen.ts";
import { tempDir } from "./harness.ts";

const FIRST_SEED = Number(process.env.FUZZ_SEED ?? 0x5eed);
const SEEDS = Number(process.env.FUZZ_SEEDS ?? 2);
const EVENTS = 3000;
const QUERIES = 300;
const BASE_TIME = 1_700_000_000;
const TIME_SPAN = 40;
/** Consumers indexes that apply only when the test settles them. */
const LAGGING = loadConfig({ flags: { "consumers.intervalMs": "1000000", "consumers.maxBatch": "1000000" } });

/** The small vocabularies events and filters draw from, so filters hit. */
interface Pools {
  pubkeys: string[];
  eValues: string[];
  pValues: string[];
  tValues: string[];
  dValues: string[];
}

const KINDS = [0, 3, 10002, 30023, 30023, 1, 1, 1, 7, 7] as const;

function makePools(g: Gen): Pools {
  const pubkeys = Array.from({ length: 5 }, () => g.hex(64));
  return {
    pubkeys,
    eValues: Array.from({ length: 6 }, () => g.hex(64)),
    pValues: [...pubkeys.slice(0, 3), g.hex(64), g.hex(64)],
    // plain words, the empty string, a hex-looking upper-case value (not stored as raw bytes),
    // a multi-byte value, one too long for the tag index, and a lone surrogate next to the
    // U+FFFD it would turn into if encoded as UTF-8
    tValues: ["nostr", "bitcoin", "", "é€😀", "A".repeat(64), "z".repeat(300), "\ud800", "\ufffd"],
    dValues: ["", "a", "b", "post-1", "d".repeat(256), "\udc00", "\ufffd"],
  };
}

function makeEvent(g: Gen, p: Pools, serialHint: number): NostrEvent {
  const kind = g.pick(KINDS);
  const tags: string[][] = [];
  if (kind === 30023) {
    const r = g.int(10);
    if (r === 0) {
      // no d tag: address uses ""
    } else if (r === 1) tags.push(["d"]);
    else if (r === 2)
      tags.push(["d", g.pick(p.dValues)], ["d", g.pick(p.dValues)]); // the first counts
    else tags.push(["d", g.pick(p.dValues)]);
  } else if (g.chance(0.05)) {
    tags.push(["d", g.pick(p.dValues)]); // a d tag on a kind where it means nothing
  }
  const nTags = g.int(4);
  for (let i = 0; i < nTags; i++) {
    switch (g.int(6)) {
      case 0:
      case 1:
        tags.push(["e", g.pick(p.eValues), ...(g.chance(0.3) ? ["wss://relay.example", "reply"] : [])]);
        break;
      case 2:
        tags.push(["p", g.pick(p.pValues)]);
        break;
      case 3:
        tags.push(["t", g.pick(p.tValues)]);
        break;
      case 4:
        tags.push(g.pick([["e"], ["t"], ["title", "nostr"], ["ee", p.eValues[0]!], ["T", "nostr"]]));
        break;
      default: {
        const t = g.pick([
          ["t", g.pick(p.tValues)],
          ["e", g.pick(p.eValues)],
        ]);
        tags.push(t, [...t]); // the same tag twice
      }
    }
  }
  const e: NostrEvent = {
    id: "",
    pubkey: g.pick(p.pubkeys),
    created_at: BASE_TIME + g.int(TIME_SPAN),
    kind,
    tags,
    content: `note ${serialHint} ${g.hex(6)}`,
    sig: g.hex(128),
  };
  e.id = computeId(e);
  return e;
}

/** The NIP-01 storage rules, applied one event at a time with no indexes at all. */
class Model {
  /** id → event, for every event currently stored */
  readonly stored = new Map<string, { e: NostrEvent; serial: number }>();
  /** address → id of the current version */
  private readonly current = new Map<string, string>();
  lastSerial = 0;

  private address(e: NostrEvent): string | undefined {
    const replaceable = e.kind === 0 || e.kind === 3 || (e.kind >= 10000 && e.kind < 20000);
    const addressable = e.kind >= 30000 && e.kind < 40000;
    if (!replaceable && !addressable) return undefined;
    const dTag = e.tags.find((t) => t[0] === "d");
    const d = addressable ? (dTag?.[1] ?? "") : "";
    return JSON.stringify([e.pubkey, e.kind, d]);
  }

  apply(
    e: NostrEvent,
  ): { status: "stored"; serial: number; replaced: boolean } | { status: "duplicate" | "rejected" } {
    if (this.stored.has(e.id)) return { status: "duplicate" };
    const addr = this.address(e);
    let replaced = false;
    if (addr !== undefined) {
      const curId = this.current.get(addr);
      if (curId !== undefined) {
        const cur = this.stored.get(curId)!.e;
        const curWins = cur.created_at > e.created_at || (cur.created_at === e.created_at && cur.id < e.id);
        if (curWins) return { status: "rejected" };
        this.stored.delete(curId);
        replaced = true;
      }
      this.current.set(addr, e.id);
    }
    const serial = ++this.lastSerial;
    this.stored.set(e.id, { e, serial });
    return { status: "stored", serial, replaced };
  }

  visible(hwm: number): NostrEvent[] {
    return [...this.stored.values()].filter((x) => x.serial <= hwm).map((x) => x.e);
  }
}

const newestFirst = (a: NostrEvent, b: NostrEvent): number =>
  b.created_at - a.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function naiveQuery(events: NostrEvent[], filters: Filter[], o: QueryOptions): string[] {
  const union = new Map<string, NostrEvent>();
  for (const f of filters) {
    const limit = Math.min(f.limit ?? o.defaultLimit, o.maxLimit);
    for (const e of events
      .filter((e) => matchFilter(f, e))
      .sort(newestFirst)
      .slice(0, limit))
      union.set(e.id, e);
  }
  return [...union.values()].sort(newestFirst).map((e) => e.id);
}

const naiveCount = (events: NostrEvent[], filters: Filter[]): number =>
  events.filter((e) => filters.some((f) => matchFilter(f, e))).length;

function addTag(f: Filter, cond: [string, string[]]): void {
  f.tags = [...(f.tags ?? []), cond];
}

function makeFilter(g: Gen, p: Pools, model: Model, ever: string[]): Filter {
  const f: Filter = {};
  const empty = () => g.chance(0.03);
  if (g.chance(0.12)) {
    // stored ids, ids that were replaced or rejected, and ids never seen
    const stored = [...model.stored.keys()];
    const pool = [g.pick(stored), g.pick(stored), g.pick(ever), g.hex(64)];
    f.ids = empty() ? [] : g.some(pool, 4);
  }
  if (g.chance(0.4)) f.authors = empty() ? [] : g.some([...p.pubkeys, p.pValues[3]!], 3);
  if (g.chance(0.45)) f.kinds = empty() ? [] : g.some([0, 1, 3, 7, 10002, 30023, 5, 30024], 3);
  if (g.chance(0.45)) {
    const letters = g.some(["e", "p", "t", "d", "e", "t", "T"], 2);
    for (const letter of new Set(letters)) {
      const pool =
        letter === "e"
          ? [...p.eValues, g.hex(64)]
          : letter === "p"
            ? [...p.pValues, g.hex(64)]
            : letter === "d"
              ? [...p.dValues, "c"]
              : [...p.tValues, "other"];
      addTag(f, [letter, empty() ? [] : g.some(pool, 3)]);
    }
  }
  if (g.chance(0.02)) {
    // more (author, kind) pairs than the planner will open cursors for
    f.authors = [...p.pubkeys, ...Array.from({ length: 40 }, () => g.hex(64))];
    f.kinds = [0, 1, 3, 7, 10002, 30023, ...Array.from({ length: 30 }, (_, i) => 100 + i)];
  }
  if (g.chance(0.35)) f.since = BASE_TIME - 2 + g.int(TIME_SPAN + 4);
  if (g.chance(0.35)) f.until = BASE_TIME - 2 + g.int(TIME_SPAN + 4);
  if (g.chance(0.7)) f.limit = g.pick([0, 1, 1, 2, 3, 5, 10, 25, 100, 1000, 100_000]);
  return f;
}

function json(f: Filter): string {
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(f)) if (k !== "tags") o[k] = v;
  for (const [l, vs] of f.tags ?? []) o[`#${l}`] = vs;
  return JSON.stringify(o);
}

const idsOf = (jsons: string[]): string[] =>
  jsons.map((j) => j.slice(STORED_ID_OFFSET, STORED_ID_OFFSET + 64));

interface Mismatch {
  seed: number;
  what: string;
}

async function fuzz(seed: number): Promise<{ mismatches: Mismatch[]; plans: Set<string>; stats: string }> {
  const g = new Gen(seed);
  const p = makePools(g);
  const dir = tempDir("fuzz-store-");
  // The derived indexes apply only when told (below), so queries run both with the REQ indexes
  // behind the log (events matched from the consumer's views) and caught up.
  let store: Store = openStore(dir);
  // Odd seeds apply on the consumers' own thread, as the relay does.
  const thread = seed % 2 === 1;
  let consumers = openConsumers(store, LAGGING, { log: () => {}, thread });
  // As the relay does: the pubkind ranges' newest bounds, raised by every write (newest.ts).
  keepNewest(store);
  let writer = new Writer(store, 256, (st, rm) => consumers.runner.committed(st, rm));
  const model = new Model();
  const mismatches: Mismatch[] = [];
  const plans = new Set<string>();
  const ever: string[] = [];
  const byId = new Map<string, NostrEvent>();
  const written: NostrEvent[] = [];
  const fail = (what: string) => {
    if (mismatches.length < 10) mismatches.push({ seed, what });
  };
  let nonEmpty = 0;

  const write = async (n: number) => {
    const batch: NostrEvent[] = [];
    for (let i = 0; i < n; i++) {
      // Now and then an earlier event again (a copy): a duplicate, or an old version since replaced.
      const earlier = g.chance(0.5) ? written : batch;
      const e =
        earlier.length > 0 && g.chance(0.04)
          ? structuredClone(g.pick(earlier))
          : makeEvent(g, p, written.length + i);
      batch.push(e);
    }
    const outcomes: Promise<WriteOutcome>[] = [];
    // Submit in chunks of varying size so some batches hold several versions of one address.
    let i = 0;
    while (i < batch.length) {
      const chunk = batch.slice(i, i + 1 + g.int(400));
      for (const e of chunk) outcomes.push(writer.submit(e, storedJson(e)));
      i += chunk.length;
      if (g.chance(0.3)) await writer.drain();
      // A batch applied while later ones replace and delete its events.
      if (g.chance(0.2)) void consumers.runner.flush();
    }
    const got = await Promise.all(outcomes);
    for (let k = 0; k < batch.length; k++) {
      const e = batch[k]!;
      ever.push(e.id);
      byId.set(e.id, e);
      written.push(e);
      const want = model.apply(e);
      const o = got[k]!;
      const gotShape =
        o.status === "stored"
          ? { status: o.status, serial: o.serial, replaced: o.replaced }
          : { status: o.status };
      if (JSON.stringify(gotShape) !== JSON.stringify(want))
        fail(
          `write #${k} ${storedJson(e)}: writer said ${JSON.stringify(gotShape)}, model ${JSON.stringify(want)}`,
        );
    }
  };

  const query = async (round: number, queries = QUERIES) => {
    for (let q = 0; q < queries; q++) {
      const filters = Array.from({ length: 1 + (g.chance(0.35) ? g.int(3) : 0) }, () =>
        makeFilter(g, p, model, ever),
      );
      // Mostly the writer's high-water mark; sometimes an older one, hiding later serials.
      const hwm = g.chance(0.15) ? g.int(writer.visibleSerial + 1) : writer.visibleSerial;
      const o: QueryOptions = {
        hwm,
        defaultLimit: g.pick([20, 100]),
        maxLimit: g.pick([50, 500]),
        yieldEvery: g.pick([3, 64, 512]),
        onPlan: (index) => plans.add(index),
      };
      // Half the queries ask for whole EVENT frames, as a REQ does (a subscription id with
      // characters that JSON escapes and ones that take several UTF-8 bytes).
      const subId = g.pick(["s", 'q"\\1', "é😀", "x".repeat(64)]);
      if (g.chance(0.5)) {
        const text = eventPrefix(subId);
        o.frame = { text, bytes: Buffer.from(text) };
      }
      const events = model.visible(hwm);
      const want = naiveQuery(events, filters, o);
      const label = `round ${round} query ${q} hwm ${hwm} limits ${o.defaultLimit}/${o.maxLimit} frames ${o.frame !== undefined} [${filters.map(json).join(",")}]`;
      const answers = (await runQuery(store, filters, o))!;
      const got = o.frame ? idsOf(answers.map((a) => a.slice(o.frame!.text.length, -1))) : idsOf(answers);
      if (JSON.stringify(got) !== JSON.stringify(want))
        fail(`${label}: runQuery gave ${JSON.stringify(got)}, naive ${JSON.stringify(want)}`);
      if (o.frame) {
        const frames = got.map((id) => eventFrame(eventPrefix(subId), storedJson(byId.get(id)!)));
        if (JSON.stringify(answers) !== JSON.stringify(frames))
          fail(`${label}: frames ${JSON.stringify(answers)}, expected ${JSON.stringify(frames)}`);
      }
      if (want.length > 0) nonEmpty++;
      const wantCount = naiveCount(events, filters);
      const gotCount = await countQuery(store, filters, o);
      if (gotCount !== wantCount) fail(`${label}: countQuery gave ${gotCount}, naive ${wantCount}`);
    }
  };

  // Everything the model holds is on disk, and nothing else is.
  const fullScan = async (when: string) => {
    const opts = { hwm: writer.visibleSerial, defaultLimit: 1e9, maxLimit: 1e9, yieldEvery: 512 };
    const want = naiveQuery(model.visible(opts.hwm), [{}], opts);
    const got = idsOf((await runQuery(store, [{}], opts))!);
    if (JSON.stringify(got) !== JSON.stringify(want))
      fail(`full scan ${when}: ${got.length} stored ids, model has ${want.length}`);
  };

  try {
    await write(EVENTS / 2);
    await query(1); // nothing applied: every event from the views
    await consumers.runner.settle();
    await write(EVENTS / 2);
    await query(2); // half applied, half in the views
    await consumers.runner.settle();
    await query(3); // all applied
    // Handed over (another process would apply now): readers add the log past the watermark,
    // a view more for what each read finds new, through replacements and deletions; then taken
    // back, the consumers catch up to what the writer handed on and go on from there.
    await consumers.release();
    for (let round = 4; round < 24; round++) {
      await write(40);
      await query(round, 20);
    }
    consumers.resume(writer.heard());
    await write(100);
    await query(24, 100);
    await consumers.runner.settle();
    await query(25, 100);
    await write(100);
    await fullScan("after writing");
    // A reopened store resumes from the same serial and holds the same events; what the
    // consumers had not applied (as after a crash) they apply from the log at open.
    await writer.drain();
    await closeStore(store);
    store = openStore(dir);
    if (store.lastSerial !== model.lastSerial)
      fail(`reopened at serial ${store.lastSerial}, model ${model.lastSerial}`);
    consumers = openConsumers(store, LAGGING, { log: () => {}, thread });
    keepNewest(store);
    writer = new Writer(store, 256, (st, rm) => consumers.runner.committed(st, rm));
    await fullScan("after reopening");
    await write(200);
    await fullScan("after writing to the reopened store");
  } finally {
    await writer.drain();
    await consumers.runner.stop();
    await closeStore(store);
  }
  const stats = `${model.stored.size} stored of ${ever.length} written, ${nonEmpty}/${3 * QUERIES + 600} queries non-empty`;
  return { mismatches, plans, stats };
}

describe("the store answers exactly what the naive matcher answers", () => {
  const plans = new Set<string>();
  for (let seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed++) {
    test(`random events and filters give identical ordered ids and counts (seed ${seed})`, async () => {
      const r = await fuzz(seed);
      for (const x of r.plans) plans.add(x);
      if (r.mismatches.length > 0) {
        console.error(`fuzz-store failed: replay with FUZZ_SEED=${seed} (${r.stats})`);
        for (const m of r.mismatches) console.error(m.what);
      }
      expect(r.mismatches).toEqual([]);
    }, 60_000);
  }

  test("the random filters reach every plan the planner can choose", () => {
    // Otherwise the fuzz would prove less than it claims.
    expect([...plans].sort()).toEqual(["empty", "ids", "kind", "pubkey", "pubkind", "tag", "time"]);
  });
});

describe("tag values the fuzz vocabulary leaves out", () => {
  test("a tag query for one lone surrogate returns no event tagged with another or with U+FFFD", async () => {
    // JSON.parse turns "\ud800" into a lone surrogate; matchFilter compares strings exactly.
    const dir = tempDir("fuzz-store-surrogate-");
    const store = openStore(dir);
    const writer = new Writer(store, 256, () => {});
    try {
      const values = ["\ud800", "\udc00", "\ufffd"];
      const events = values.map((value, i): NostrEvent => {
        const e = {
          id: "",
          pubkey: "a1".repeat(32),
          created_at: BASE_TIME + i,
          kind: 1,
          tags: [["t", value]],
          content: `${i}`,
          sig: "0".repeat(128),
        };
        e.id = computeId(e);
        return e;
      });
      for (const e of events) expect((await writer.submit(e, storedJson(e))).status).toBe("stored");
      const o = { hwm: writer.visibleSerial, defaultLimit: 100, maxLimit: 100, yieldEvery: 512 };
      const got: Record<string, string[]> = {};
      const want: Record<string, string[]> = {};
      for (const value of values) {
        const filters: Filter[] = [{ tags: [["t", [value]]] }];
        got[JSON.stringify(value)] = idsOf((await runQuery(store, filters, o))!);
        want[JSON.stringify(value)] = naiveQuery(events, filters, o);
      }
      expect(got).toEqual(want);
    } finally {
      await closeStore(store);
    }
  });
});
