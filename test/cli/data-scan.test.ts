// The oldest-first scans behind `relay export` and `relay delete` (src/store/scan.ts), in-process:
// with tiny chunks, so every cursor crosses many chunk boundaries, each filter must yield exactly
// what the naive matcher finds, in (created_at, arrival) order, each event once.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { finalizeEvent, getPublicKey } from "nostr-tools/pure";
import { countByKind, scanOldestFirst, storedId, timeBounds } from "../../src/indexes/scan.ts";
import { storedJson } from "../../src/nostr/canonical.ts";
import type { NostrEvent } from "../../src/nostr/event.ts";
import type { Filter } from "../../src/nostr/filter.ts";
import { matchFilter } from "../../src/nostr/filter.ts";
import { removeBySerial } from "../../src/store/lifecycle.ts";
import { writeTxn } from "../../src/store/serials.ts";
import { closeStore, openStore } from "../../src/store/store.ts";
import type { Store } from "../../src/store/types.ts";
import { Writer } from "../../src/store/writer.ts";
import { tempDir } from "../harness.ts";

const sk = (i: number): Uint8Array => new Bun.CryptoHasher("sha256").update(`scan key ${i}`).digest();
const pk = (i: number): string => getPublicKey(sk(i));
const BASE = 1_600_000_000;

function sign(i: number, kind: number, created_at: number, tags: string[][]): NostrEvent {
  const { id, pubkey, content, sig } = finalizeEvent({ kind, created_at, tags, content: `${i}` }, sk(i % 4));
  return { id, pubkey, created_at, kind, tags, content, sig };
}

// 120 events, many sharing created_at, multi-valued tags so one event sits under several prefixes.
const EVENTS: NostrEvent[] = Array.from({ length: 120 }, (_, i) => {
  const tags = [["t", ["red", "green", "blue"][i % 3]!]];
  if (i % 2 === 0) tags.push(["t", "even"]);
  if (i % 5 === 0) tags.push(["t", "red"], ["t", "green"]); // repeated letter, several values
  if (i % 7 === 0) tags.push(["p", pk((i + 1) % 4)]);
  return sign(i, [1, 7, 6][i % 3]!, BASE + Math.floor(i / 4), tags);
});

const dir = tempDir("relay-scan-");
let s: Store;
beforeAll(async () => {
  s = openStore(dir);
  const w = new Writer(s, 1000, () => {});
  await Promise.all(EVENTS.map((e) => w.submit(e, storedJson(e))));
});
afterAll(() => closeStore(s));

const naive = (f: Filter): string[] =>
  EVENTS.map((e, i) => ({ e, i }))
    .filter(({ e }) => matchFilter(f, e))
    .sort((a, b) => a.e.created_at - b.e.created_at || a.i - b.i)
    .map(({ e }) => e.id);

const FILTERS: [string, Filter][] = [
  ["everything (time index)", {}],
  ["since/until", { since: BASE + 5, until: BASE + 17 }],
  ["kinds", { kinds: [7, 6] }],
  ["authors", { authors: [pk(0), pk(2)] }],
  ["authors × kinds", { authors: [pk(1), pk(3)], kinds: [1, 7] }],
  ["one tag, several values", { tags: [["t", ["red", "even", "green"]]] }],
  [
    "two tags",
    {
      tags: [
        ["t", ["blue"]],
        ["p", [pk(2), pk(0)]],
      ],
    },
  ],
  [
    "tag and kind, within a window",
    { tags: [["t", ["even"]]], kinds: [1], since: BASE + 3, until: BASE + 25 },
  ],
  ["ids", { ids: [EVENTS[99]!.id, EVENTS[3]!.id, EVENTS[50]!.id] }],
  ["ids with a kind that excludes one", { ids: [EVENTS[0]!.id, EVENTS[1]!.id], kinds: [1] }],
  ["an empty window", { since: BASE + 10, until: BASE + 9 }],
];

describe("scanOldestFirst", () => {
  for (const [name, f] of FILTERS)
    for (const chunk of [1, 3, 1024])
      test(`${name}, chunks of ${chunk}`, () => {
        const got = [...scanOldestFirst(s, f, chunk)];
        expect(got.map((x) => storedId(x.json))).toEqual(naive(f));
        for (const x of got) expect(x.json.toString()).toBe(storedJson(JSON.parse(x.json.toString())));
      });

  test("counts by kind and the time bounds come from the indexes", () => {
    expect(Object.fromEntries(countByKind(s))).toEqual({ 1: 40, 6: 40, 7: 40 });
    expect(timeBounds(s)).toEqual({ oldest: BASE, newest: BASE + 29 });
  });

  test("removeBySerial takes the event out of every scan", async () => {
    const victims = naive({ tags: [["t", ["red"]]] });
    await writeTxn(s, () => {
      for (const x of [...scanOldestFirst(s, { tags: [["t", ["red"]]] }, 2)]) removeBySerial(s, x.serial);
    });
    for (const [, f] of FILTERS)
      expect([...scanOldestFirst(s, f, 3)].map((x) => storedId(x.json))).toEqual(
        naive(f).filter((id) => !victims.includes(id)),
      );
  });
});
