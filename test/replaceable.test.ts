// The NIP-01 replaceable and addressable rules as a table, driven through the real Writer on a
// temporary LMDB. Each row submits some earlier versions, then one incoming version, and states
// the incoming version's outcome and exactly what the store then holds (newest first). Every
// index is checked too, so a replaced version must leave no entry behind.
import { afterEach, describe, expect, test } from "bun:test";
import { countQuery, runQuery } from "../src/indexes/query.ts";
import { STORED_ID_OFFSET, storedJson } from "../src/nostr/canonical.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import type { Filter } from "../src/nostr/filter.ts";
import { matchFilter } from "../src/nostr/filter.ts";
import type { WriteOutcome } from "../src/store/batch.ts";
import { openStore } from "../src/store/store.ts";
import type { Store } from "../src/store/types.ts";
import { Writer } from "../src/store/writer.ts";
import { tempDir } from "./harness.ts";

const ALICE = "a1".repeat(32);
const BOB = "b2".repeat(32);
const T = 1_700_000_000;

interface Version {
  label: string;
  /** seconds after T */
  at: number;
  /** one hex digit, repeated to make the id, so rows can order ids on purpose */
  id: string;
  kind?: number;
  pubkey?: string;
  /** tags besides the ["t", "topic"] every version carries; default: [["d", "x"]] on addressable kinds */
  tags?: string[][];
}

interface Row {
  rule: string;
  kind: number;
  stored: Version[];
  incoming: Version;
  /** submit every version in one writer batch instead of one after another */
  oneBatch?: boolean;
  outcome: WriteOutcome["status"];
  /** labels of what the store holds afterwards, newest first (ties: lower id first) */
  holds: string[];
}

const v = (label: string, at: number, id: string, more: Partial<Version> = {}): Version => ({
  label,
  at,
  id,
  ...more,
});
const d = (value: string): string[][] => [["d", value]];
const long = (n: number, last = ""): string => "x".repeat(n) + last;

const replaceableRows: Row[] = [
  {
    rule: "a replaceable event is stored when no version is",
    kind: 0,
    stored: [],
    incoming: v("new", 100, "a"),
    outcome: "stored",
    holds: ["new"],
  },
  {
    rule: "a newer replaceable event replaces the stored one",
    kind: 0,
    stored: [v("old", 100, "a")],
    incoming: v("new", 200, "b"),
    outcome: "stored",
    holds: ["new"],
  },
  {
    rule: "a newer replaceable event replaces the stored one even when that has the lower id",
    kind: 3,
    stored: [v("old", 100, "1")],
    incoming: v("new", 101, "f"),
    outcome: "stored",
    holds: ["new"],
  },
  {
    rule: "an older replaceable event is rejected and the stored one kept",
    kind: 3,
    stored: [v("cur", 200, "a")],
    incoming: v("old", 100, "b"),
    outcome: "rejected",
    holds: ["cur"],
  },
  {
    rule: "an older replaceable event is rejected even when it has the lower id",
    kind: 3,
    stored: [v("cur", 200, "f")],
    incoming: v("old", 199, "1"),
    outcome: "rejected",
    holds: ["cur"],
  },
  {
    rule: "on equal created_at the replaceable event with the lower id replaces the stored one",
    kind: 10002,
    stored: [v("high", 100, "b")],
    incoming: v("low", 100, "a"),
    outcome: "stored",
    holds: ["low"],
  },
  {
    rule: "on equal created_at a replaceable event with a higher id is rejected",
    kind: 10002,
    stored: [v("low", 100, "a")],
    incoming: v("high", 100, "b"),
    outcome: "rejected",
    holds: ["low"],
  },
  {
    rule: "the stored version of a replaceable event sent again is a duplicate",
    kind: 0,
    stored: [v("cur", 100, "a")],
    incoming: v("cur", 100, "a"),
    outcome: "duplicate",
    holds: ["cur"],
  },
  {
    rule: "a replaced version sent again is rejected, not stored again",
    kind: 0,
    stored: [v("v1", 100, "a"), v("v2", 200, "b")],
    incoming: v("v1", 100, "a"),
    outcome: "rejected",
    holds: ["v2"],
  },
  {
    rule: "a version between two stored ones is rejected once the newest is stored",
    kind: 0,
    stored: [v("v1", 100, "a"), v("v3", 300, "c")],
    incoming: v("v2", 200, "b"),
    outcome: "rejected",
    holds: ["v3"],
  },
  {
    rule: "replaceable events of different authors are kept side by side",
    kind: 0,
    stored: [v("alice", 100, "a")],
    incoming: v("bob", 200, "b", { pubkey: BOB }),
    outcome: "stored",
    holds: ["bob", "alice"],
  },
  {
    rule: "replaceable events of different kinds by one author are kept side by side",
    kind: 0,
    stored: [v("k0", 100, "b")],
    incoming: v("k3", 100, "a", { kind: 3 }),
    outcome: "stored",
    holds: ["k3", "k0"],
  },
  {
    rule: "a d tag does not split a replaceable kind into addresses",
    kind: 0,
    stored: [v("x", 100, "a", { tags: d("x") })],
    incoming: v("y", 200, "b", { tags: d("y") }),
    outcome: "stored",
    holds: ["y"],
  },
  {
    rule: "kind 10000 is replaceable",
    kind: 10000,
    stored: [v("old", 100, "a")],
    incoming: v("new", 200, "b"),
    outcome: "stored",
    holds: ["new"],
  },
  {
    rule: "kind 19999 is replaceable",
    kind: 19999,
    stored: [v("new", 200, "a")],
    incoming: v("old", 100, "b"),
    outcome: "rejected",
    holds: ["new"],
  },
];

const regularRows: Row[] = [1, 7, 2, 9999, 40000].map((kind) => ({
  rule: `kind ${kind} events of one author are all kept`,
  kind,
  stored: [v("first", 100, "a", { tags: d("x") })],
  incoming: v("second", 200, "b", { tags: d("x") }),
  outcome: "stored",
  holds: ["second", "first"],
}));

const addressableRows: Row[] = [
  {
    rule: "a newer addressable event with the same d replaces the stored one",
    kind: 30023,
    stored: [v("old", 100, "a")],
    incoming: v("new", 200, "b"),
    outcome: "stored",
    holds: ["new"],
  },
  {
    rule: "an older addressable event with the same d is rejected",
    kind: 30023,
    stored: [v("cur", 200, "a")],
    incoming: v("old", 100, "b"),
    outcome: "rejected",
    holds: ["cur"],
  },
  {
    rule: "on equal created_at the addressable event with the lower id replaces the stored one",
    kind: 30023,
    stored: [v("high", 100, "c")],
    incoming: v("low", 100, "b"),
    outcome: "stored",
    holds: ["low"],
  },
  {
    rule: "on equal created_at an addressable event with a higher id is rejected",
    kind: 30023,
    stored: [v("low", 100, "b")],
    incoming: v("high", 100, "c"),
    outcome: "rejected",
    holds: ["low"],
  },
  {
    rule: "the stored version of an addressable event sent again is a duplicate",
    kind: 30023,
    stored: [v("cur", 100, "a")],
    incoming: v("cur", 100, "a"),
    outcome: "duplicate",
    holds: ["cur"],
  },
  {
    rule: "a replaced addressable version sent again is rejected",
    kind: 30023,
    stored: [v("v1", 100, "a"), v("v2", 200, "b")],
    incoming: v("v1", 100, "a"),
    outcome: "rejected",
    holds: ["v2"],
  },
  {
    rule: "addressable events with different d values are kept side by side",
    kind: 30023,
    stored: [v("x", 200, "a", { tags: d("x") })],
    incoming: v("y", 100, "b", { tags: d("y") }),
    outcome: "stored",
    holds: ["x", "y"],
  },
  {
    rule: "d values differing only in case are different addresses",
    kind: 30023,
    stored: [v("upper", 100, "a", { tags: d("A") })],
    incoming: v("lower", 200, "b", { tags: d("a") }),
    outcome: "stored",
    holds: ["lower", "upper"],
  },
  {
    rule: "an addressable event without a d tag and one with an empty d share an address",
    kind: 30023,
    stored: [v("none", 100, "a", { tags: [] })],
    incoming: v("empty", 200, "b", { tags: d("") }),
    outcome: "stored",
    holds: ["empty"],
  },
  {
    rule: "a d tag with no value counts as an empty d",
    kind: 30023,
    stored: [v("bare", 200, "a", { tags: [["d"]] })],
    incoming: v("none", 100, "b", { tags: [] }),
    outcome: "rejected",
    holds: ["bare"],
  },
  {
    rule: "only the first d tag names the address, so a later matching d tag does not replace",
    kind: 30023,
    stored: [v("x", 100, "a", { tags: d("x") })],
    incoming: v("y", 200, "b", { tags: [...d("y"), ...d("x")] }),
    outcome: "stored",
    holds: ["y", "x"],
  },
  {
    rule: "only the first d tag names the address, so a first matching d tag replaces",
    kind: 30023,
    stored: [v("x", 100, "a", { tags: d("x") })],
    incoming: v("xy", 200, "b", { tags: [...d("x"), ...d("y")] }),
    outcome: "stored",
    holds: ["xy"],
  },
  {
    rule: "the same d value over 255 bytes is one address",
    kind: 30023,
    stored: [v("old", 100, "a", { tags: d(long(300)) })],
    incoming: v("new", 200, "b", { tags: d(long(300)) }),
    outcome: "stored",
    holds: ["new"],
  },
  {
    rule: "d values over 255 bytes that differ only in their last character are different addresses",
    kind: 30023,
    stored: [v("a", 100, "a", { tags: d(long(299, "a")) })],
    incoming: v("b", 200, "b", { tags: d(long(299, "b")) }),
    outcome: "stored",
    holds: ["b", "a"],
  },
  {
    rule: "a d value of exactly 255 bytes and its 256-byte extension are different addresses",
    kind: 30023,
    stored: [v("short", 100, "a", { tags: d(long(255)) })],
    incoming: v("long", 200, "b", { tags: d(long(256)) }),
    outcome: "stored",
    holds: ["long", "short"],
  },
  {
    rule: "a d value that is a lone surrogate and one that is U+FFFD are different addresses",
    kind: 30023,
    stored: [v("surrogate", 100, "a", { tags: d("\ud800") })],
    incoming: v("replacement", 200, "b", { tags: d("\ufffd") }),
    outcome: "stored",
    holds: ["replacement", "surrogate"],
  },
  {
    rule: "addressable events with one d but different kinds are kept side by side",
    kind: 30023,
    stored: [v("k30023", 100, "a")],
    incoming: v("k30024", 200, "b", { kind: 30024 }),
    outcome: "stored",
    holds: ["k30024", "k30023"],
  },
  {
    rule: "addressable events with one d but different authors are kept side by side",
    kind: 30023,
    stored: [v("alice", 200, "a")],
    incoming: v("bob", 100, "b", { pubkey: BOB }),
    outcome: "stored",
    holds: ["alice", "bob"],
  },
  {
    rule: "kind 30000 is addressable",
    kind: 30000,
    stored: [v("old", 100, "a")],
    incoming: v("new", 200, "b"),
    outcome: "stored",
    holds: ["new"],
  },
  {
    rule: "kind 39999 is addressable",
    kind: 39999,
    stored: [v("new", 200, "a")],
    incoming: v("old", 100, "b"),
    outcome: "rejected",
    holds: ["new"],
  },
];

const oneBatchRows: Row[] = [
  {
    rule: "a newer version after an older one in the same batch replaces it",
    kind: 0,
    stored: [v("old", 100, "a")],
    incoming: v("new", 200, "b"),
    oneBatch: true,
    outcome: "stored",
    holds: ["new"],
  },
  {
    rule: "an older version after a newer one in the same batch is rejected",
    kind: 30023,
    stored: [v("new", 200, "a")],
    incoming: v("old", 100, "b"),
    oneBatch: true,
    outcome: "rejected",
    holds: ["new"],
  },
  {
    rule: "on equal created_at the lower id wins within one batch",
    kind: 10002,
    stored: [v("high", 100, "b")],
    incoming: v("low", 100, "a"),
    oneBatch: true,
    outcome: "stored",
    holds: ["low"],
  },
  {
    rule: "one event twice in the same batch is stored once and then a duplicate",
    kind: 30023,
    stored: [v("cur", 100, "a")],
    incoming: v("cur", 100, "a"),
    oneBatch: true,
    outcome: "duplicate",
    holds: ["cur"],
  },
  {
    rule: "three versions in one batch leave only the newest",
    kind: 3,
    stored: [v("v2", 200, "b"), v("v3", 300, "c")],
    incoming: v("v1", 100, "a"),
    oneBatch: true,
    outcome: "rejected",
    holds: ["v3"],
  },
];

const isAddressableKind = (k: number): boolean => k >= 30000 && k < 40000;

function toEvent(row: Row, ver: Version): NostrEvent {
  const kind = ver.kind ?? row.kind;
  const own = ver.tags ?? (isAddressableKind(kind) ? d("x") : []);
  return {
    id: ver.id.repeat(64),
    pubkey: ver.pubkey ?? ALICE,
    created_at: T + ver.at,
    kind,
    tags: [...own, ["t", "topic"]],
    content: ver.label,
    sig: "0".repeat(128),
  };
}

const newestFirst = (a: NostrEvent, b: NostrEvent): number =>
  b.created_at - a.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

let store: Store | undefined;

afterEach(async () => {
  await store?.env.close();
  store = undefined;
});

async function run(row: Row): Promise<void> {
  store = openStore(tempDir("replaceable-"));
  const writer = new Writer(store, 256, () => {});
  const versions = [...row.stored, row.incoming].map((ver) => toEvent(row, ver));
  const submit = (e: NostrEvent) => writer.submit(e, storedJson(e));
  let outcome: WriteOutcome;
  if (row.oneBatch) {
    const all = versions.map(submit);
    outcome = await all[all.length - 1]!;
  } else {
    for (const e of versions.slice(0, -1)) await submit(e);
    outcome = await submit(versions[versions.length - 1]!);
  }
  await writer.drain();
  expect(outcome.status).toBe(row.outcome);

  const byLabel = new Map(versions.map((e) => [e.content, e]));
  const holds = row.holds.map((l) => byLabel.get(l)!);
  const o = { hwm: writer.visibleSerial, defaultLimit: 100, maxLimit: 100, yieldEvery: 512 };
  const labelsOf = (jsons: string[]) =>
    jsons.map(
      (j) => versions.find((e) => e.id === j.slice(STORED_ID_OFFSET, STORED_ID_OFFSET + 64))!.content,
    );

  expect(labelsOf((await runQuery(store, [{}], o))!)).toEqual(row.holds);
  expect(await countQuery(store, [{}], o)).toBe(row.holds.length);

  // Every index agrees: whatever a filter selects from what the store holds, and nothing else.
  const dValues = [
    ...new Set(versions.flatMap((e) => e.tags.filter((t) => t[0] === "d").map((t) => t[1] ?? ""))),
  ];
  const filters: Filter[] = [
    { ids: versions.map((e) => e.id) },
    { authors: [ALICE, BOB] },
    { kinds: [...new Set(versions.map((e) => e.kind))] },
    { authors: [ALICE, BOB], kinds: [...new Set(versions.map((e) => e.kind))] },
    { tags: [["t", ["topic"]]] },
    ...dValues.map((value): Filter => ({ tags: [["d", [value]]] })),
    { since: T, until: T + 1000 },
  ];
  for (const f of filters) {
    const want = holds
      .filter((e) => matchFilter(f, e))
      .sort(newestFirst)
      .map((e) => e.content);
    expect({ filter: f, got: labelsOf((await runQuery(store, [f], o))!) }).toEqual({ filter: f, got: want });
    expect({ filter: f, count: await countQuery(store, [f], o) }).toEqual({ filter: f, count: want.length });
  }
}

for (const [title, rows] of [
  ["replaceable kinds", replaceableRows],
  ["regular kinds", regularRows],
  ["addressable kinds", addressableRows],
  ["versions written in one batch", oneBatchRows],
] as const) {
  describe(title, () => {
    for (const row of rows) test(row.rule, () => run(row));
  });
}
