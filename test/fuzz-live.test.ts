// Differential fuzz of the live inverted index against the naive matcher. Random subscriptions
// (sets of filters over small vocabularies) come and go in a LiveIndex while random events are
// matched; each event must visit exactly the subscriptions that have a filter matchFilter accepts,
// each once. FUZZ_SEED=<n> replays one seed; FUZZ_SEEDS=<k> runs k consecutive seeds from it.
import { describe, expect, test } from "bun:test";
import type { LiveSub } from "../src/fanout/live-index.ts";
import { LiveIndex } from "../src/fanout/live-index.ts";
import { computeId } from "../src/nostr/canonical.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import type { Filter } from "../src/nostr/filter.ts";
import { matchFilter } from "../src/nostr/filter.ts";
import { Gen } from "./gen.ts";

const FIRST_SEED = Number(process.env.FUZZ_SEED ?? 0x11fe);
const SEEDS = Number(process.env.FUZZ_SEEDS ?? 3);
const EVENTS = 3000;
const BASE_TIME = 1_700_000_000;
const TIME_SPAN = 40;

class Sub implements LiveSub {
  stamp = 0;
  constructor(
    readonly name: number,
    readonly filters: readonly Filter[],
  ) {}
}

interface Pools {
  pubkeys: string[];
  values: Record<string, string[]>;
  events: NostrEvent[];
}

const KINDS = [0, 1, 1, 3, 7, 7, 10002, 20001, 30023];

function makePools(g: Gen): Pools {
  const pubkeys = Array.from({ length: 6 }, () => g.hex(64));
  const values: Record<string, string[]> = {
    e: Array.from({ length: 6 }, () => g.hex(64)),
    p: [...pubkeys.slice(0, 3), g.hex(64)],
    // values that look like bucket keys of other letters, empty and long values
    t: ["nostr", "bitcoin", "", "e:nostr", "nostr:", "z".repeat(300), "\ud800", "\ufffd"],
    d: ["", "a", "b"],
    E: ["nostr", "X"],
  };
  const p: Pools = { pubkeys, values, events: [] };
  // A fixed pool of events, so filters can name their ids and the same event is matched again.
  for (let i = 0; i < 300; i++) p.events.push(makeEvent(g, p, i));
  return p;
}

function makeEvent(g: Gen, p: Pools, n: number): NostrEvent {
  const tags: string[][] = [];
  const nTags = g.int(5);
  for (let i = 0; i < nTags; i++) {
    const r = g.int(10);
    if (r < 6) {
      const letter = g.pick(["e", "e", "p", "t", "t", "d", "E"]);
      const t = [letter, g.pick(p.values[letter]!)];
      tags.push(t);
      if (g.chance(0.2)) tags.push([...t]); // the same tag twice
    } else if (r === 6)
      tags.push([g.pick(["e", "t", "p"])]); // a tag with no value
    else if (r === 7)
      tags.push(["ee", g.pick(p.values.e!)]); // a multi-letter name never matches #e
    else if (r === 8) tags.push(["", "nostr"]);
    else tags.push(["t", g.pick(p.values.t!), "extra", "values"]);
  }
  const e: NostrEvent = {
    id: "",
    pubkey: g.pick(p.pubkeys),
    created_at: BASE_TIME + g.int(TIME_SPAN),
    kind: g.pick(KINDS),
    tags,
    content: `live ${n}`,
    sig: "0".repeat(128),
  };
  e.id = computeId(e);
  return e;
}

function addTag(f: Filter, cond: [string, string[]]): void {
  f.tags = [...(f.tags ?? []), cond];
}

function makeFilter(g: Gen, p: Pools): Filter {
  const f: Filter = {};
  const empty = () => g.chance(0.03);
  if (g.chance(0.12)) f.ids = empty() ? [] : g.some([...p.events.map((e) => e.id), g.hex(64)], 4);
  if (g.chance(0.35)) f.authors = empty() ? [] : g.some([...p.pubkeys, g.hex(64)], 3);
  if (g.chance(0.4)) f.kinds = empty() ? [] : g.some([0, 1, 3, 7, 10002, 20001, 30023, 5], 3);
  if (g.chance(0.45)) {
    for (const letter of new Set(g.some(["e", "p", "t", "t", "d", "E"], 3)))
      addTag(f, [letter, empty() ? [] : g.some([...p.values[letter]!, "other"], 3)]);
  }
  if (g.chance(0.25)) f.since = BASE_TIME - 2 + g.int(TIME_SPAN + 4);
  if (g.chance(0.25)) f.until = BASE_TIME - 2 + g.int(TIME_SPAN + 4);
  if (g.chance(0.2)) f.limit = g.pick([0, 1, 10]); // limits do not apply to live events
  return f;
}

function fuzz(seed: number): { failures: string[]; visits: number; events: number } {
  const g = new Gen(seed);
  const p = makePools(g);
  const live = new LiveIndex<Sub>();
  const registered = new Set<Sub>();
  const failures: string[] = [];
  let names = 0;
  let visits = 0;
  const fail = (what: string) => {
    if (failures.length < 10) failures.push(what);
  };
  const addSub = () => {
    const nFilters = g.chance(0.6) ? 1 : 1 + g.int(4);
    const sub = new Sub(
      names++,
      Array.from({ length: nFilters }, () => makeFilter(g, p)),
    );
    live.add(sub);
    registered.add(sub);
  };
  for (let i = 0; i < 400; i++) addSub();

  for (let n = 0; n < EVENTS; n++) {
    // Subscriptions come and go between events.
    const churn = g.int(4);
    for (let i = 0; i < churn; i++) {
      if (g.chance(0.5) && registered.size > 0) {
        const victim = g.pick([...registered]);
        live.remove(victim);
        registered.delete(victim);
        if (g.chance(0.1)) live.remove(victim); // removing twice is harmless
      } else addSub();
    }
    if (live.size !== registered.size)
      fail(`after event ${n}: size ${live.size}, registered ${registered.size}`);

    const e = g.chance(0.5) ? g.pick(p.events) : makeEvent(g, p, 1000 + n);
    const seen = new Map<Sub, number>();
    live.match(e, (sub) => seen.set(sub, (seen.get(sub) ?? 0) + 1));
    visits += seen.size;
    const want = [...registered].filter((s) => s.filters.some((f) => matchFilter(f, e)));
    const wrong: string[] = [];
    for (const s of want) if (!seen.has(s)) wrong.push(`missed sub ${s.name} ${JSON.stringify(s.filters)}`);
    for (const [s, times] of seen) {
      if (!registered.has(s)) wrong.push(`visited removed sub ${s.name}`);
      else if (!want.includes(s))
        wrong.push(`visited sub ${s.name} ${JSON.stringify(s.filters)} that matches nothing`);
      if (times !== 1) wrong.push(`visited sub ${s.name} ${times} times`);
    }
    if (wrong.length > 0) fail(`event ${n} ${JSON.stringify(e)}: ${wrong.slice(0, 3).join("; ")}`);
  }
  // Removing every subscription leaves an index that visits nothing.
  for (const s of registered) live.remove(s);
  let after = 0;
  for (const e of p.events) live.match(e, () => after++);
  if (after !== 0 || live.size !== 0)
    fail(`after removing every subscription: ${after} visits, size ${live.size}`);
  return { failures, visits, events: EVENTS };
}

describe("the live index visits exactly the subscriptions the naive matcher picks", () => {
  for (let seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed++) {
    test(`random subscriptions and events give the same subscriptions, each once (seed ${seed})`, () => {
      const r = fuzz(seed);
      if (r.failures.length > 0) {
        console.error(`fuzz-live failed: replay with FUZZ_SEED=${seed}`);
        for (const f of r.failures) console.error(f);
      }
      expect(r.failures).toEqual([]);
      // The vocabularies are small enough that events do reach subscriptions.
      expect(r.visits).toBeGreaterThan(r.events);
    });
  }

  test("a subscription matched by several of its filters in several buckets is visited once", () => {
    const e: NostrEvent = {
      id: "a".repeat(64),
      pubkey: "b".repeat(64),
      created_at: BASE_TIME,
      kind: 1,
      tags: [
        ["e", "c".repeat(64)],
        ["e", "c".repeat(64)],
        ["t", "nostr"],
      ],
      content: "",
      sig: "0".repeat(128),
    };
    const sub = new Sub(1, [
      { ids: [e.id] },
      { authors: [e.pubkey] },
      { tags: [["e", ["c".repeat(64)]]] },
      { tags: [["t", ["nostr", "nostr"]]] },
      { kinds: [1, 1] },
      {},
    ]);
    const live = new LiveIndex<Sub>();
    live.add(sub);
    let n = 0;
    live.match(e, () => n++);
    live.match(e, () => n++);
    expect(n).toBe(2);
  });
});
