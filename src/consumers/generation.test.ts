import { expect, test } from "bun:test";
import type { NostrEvent } from "../nostr/event.ts";
import { Gen } from "./generation.ts";

const ev = (tags = 0): NostrEvent => ({
  id: "0".repeat(64),
  pubkey: "1".repeat(64),
  created_at: 1,
  kind: 1,
  tags: Array.from({ length: tags }, () => ["t", "x"]),
  content: "",
  sig: "2".repeat(128),
});
const stored = (serial: number, json: string, tags = 0) => ({ event: ev(tags), json, serial });
const removal = (serial: number, seq: number, json: string, tags = 0) => ({
  event: ev(tags),
  json,
  serial,
  seq,
});

test("a generation counts what each commit stored and removed, by events, bytes and weight", () => {
  const g = new Gen(7, [], 10, 3);
  g.take([], [stored(11, "aaaa", 2), stored(12, "bb")], []);
  // a removal of an event an earlier generation holds: kept, and counted
  g.take([], [], [removal(5, 4, "cccccc", 1)]);
  expect([g.live, g.bytes, g.weight, g.maxSerial, g.maxSeq]).toEqual([2, 4 + 2 + 6, 3 + 1 + 2, 12, 4]);
  expect(g.empty).toBe(false);
  const p = g.payload();
  expect([p.n, [...p.adds], [...p.removes], p.maxSerial, p.maxSeq, p.bytes]).toEqual([
    7,
    [11, 12],
    [4],
    12,
    4,
    12,
  ]);
});

test("an event added and removed in the same generation is in neither side of it", () => {
  const g = new Gen(1, [], 0, 0);
  g.take([], [stored(1, "aaaa"), stored(2, "bb")], []);
  g.take([], [], [removal(1, 1, "aaaa")]);
  // its weight stays: the batch to write was sized by what came
  expect([g.live, g.bytes, g.weight]).toEqual([1, 2, 2]);
  const p = g.payload();
  expect([[...p.adds], [...p.removes], p.maxSeq]).toEqual([[2], [], 1]);
});

test("the log's marks may pass what reaches the generation; they never go back", () => {
  const g = new Gen(1, [], 5, 2);
  g.reaches({ serial: 9, removal: 4 });
  g.reaches({ serial: 7, removal: 3 });
  expect([g.maxSerial, g.maxSeq, g.empty]).toEqual([9, 4, true]);
});
