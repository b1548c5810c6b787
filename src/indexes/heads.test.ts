import { describe, expect, test } from "bun:test";
import type { Head, RangeName } from "./heads.ts";
import { Heads, rangeName as headKey } from "./heads.ts";
import { newTail, tailPart, viewTail } from "./tail.ts";

const A = "a".repeat(64);

const named = (k: RangeName | string): RangeName => (typeof k === "string" ? { at: k, n: 0 } : k);
const put = (
  h: Heads,
  k: RangeName | string,
  t: number[],
  s: number[],
  complete: boolean,
  gen: number,
): void => h.put(named(k).at, named(k).n, t, s, complete, gen);
const get = (h: Heads, k: RangeName | string, want: number, gen: number): Head | undefined =>
  h.get(named(k).at, named(k).n, want, gen);
const B = "b".repeat(64);

/** A batch's view holding one event. */
function batch(pubkey: string, kind: number, tags: string[][] = []) {
  const t = newTail();
  const e = { id: "0".repeat(64), pubkey, kind, created_at: 1, tags, content: "", sig: "" };
  viewTail(t, 1, tailPart(e, "{}"), 1, false);
  return t;
}

describe("heads kept between REQs", () => {
  test("a kept range is served while no batch touched it, and read again after one did", () => {
    const h = new Heads(100);
    put(h, headKey.pubkind(A, 1), [30, 20], [3, 2], true, 5);
    put(h, headKey.tag("t nostr"), [30], [3], false, 5);
    expect(get(h, headKey.pubkind(A, 1), 4, 5)?.serials).toEqual([3, 2]);
    // Not complete and fewer entries than wanted: read.
    expect(get(h, headKey.tag("t nostr"), 4, 5)).toBeUndefined();
    expect(get(h, headKey.tag("t nostr"), 1, 5)?.serials).toEqual([3]);

    h.forgetBatch(batch(B, 1), 6); // another author's note
    expect(get(h, headKey.pubkind(A, 1), 4, 6)?.serials).toEqual([3, 2]);
    h.forgetBatch(batch(A, 1, [["t", "nostr"]]), 7);
    expect(get(h, headKey.pubkind(A, 1), 4, 7)).toBeUndefined();
    expect(get(h, headKey.tag("t nostr"), 1, 7)).toBeUndefined();
  });

  test("a read that sees a batch the runner has not heard of yet reads the range itself", () => {
    const h = new Heads(100);
    put(h, headKey.pubkey(A), [30], [3], true, 5);
    // Batch 6 is on disk (the reader's transaction sees it) but not heard of: it may have
    // touched the range, so what was kept at 5 is not taken.
    expect(get(h, headKey.pubkey(A), 1, 6)).toBeUndefined();
    h.forgetBatch(batch(B, 1), 6);
    expect(get(h, headKey.pubkey(A), 1, 6)?.serials).toEqual([3]);
  });

  test("a read made in a transaction behind the batches heard of is not kept", () => {
    const h = new Heads(100);
    h.forgetBatch(batch(B, 1), 8);
    put(h, headKey.kind(1), [30], [3], true, 7);
    expect(h.size).toBe(0);
    put(h, headKey.kind(1), [30], [3], true, 8);
    expect(get(h, headKey.kind(1), 1, 8)?.serials).toEqual([3]);
  });

  test("every range a batch adds to or removes from is forgotten: author, kind, both, tags, time", () => {
    const h = new Heads(100);
    const keys = [
      headKey.pubkey(A),
      headKey.kind(7),
      headKey.pubkind(A, 7),
      headKey.tag(`e ${B}`),
      headKey.tag(`p ${B}`),
      headKey.time(),
    ];
    for (const k of keys) put(h, k, [1], [1], true, 1);
    put(h, headKey.kind(1), [1], [1], true, 1);
    h.forgetBatch(
      batch(A, 7, [
        ["e", B],
        ["p", B],
      ]),
      2,
    );
    for (const k of keys) expect(get(h, k, 1, 2)).toBeUndefined();
    expect(get(h, headKey.kind(1), 1, 2)?.serials).toEqual([1]);
    // A removal: its author and kind are in the view (not its tags, see heads.ts).
    for (const k of keys) put(h, k, [1], [1], true, 2);
    const removed = newTail();
    const e = { id: "0".repeat(64), pubkey: A, kind: 7, created_at: 1, tags: [], content: "", sig: "" };
    viewTail(removed, 1, tailPart(e, "{}"), 1, true);
    h.forgetBatch(removed, 3);
    for (const k of [headKey.pubkey(A), headKey.kind(7), headKey.pubkind(A, 7), headKey.time()])
      expect(get(h, k, 1, 3)).toBeUndefined();
  });

  test("at most maxEntries entries are kept, the ranges kept longest going first", () => {
    const h = new Heads(4);
    put(h, "x", [3, 2], [3, 2], true, 1);
    put(h, "y", [3, 2], [3, 2], true, 1);
    put(h, "z", [3], [3], true, 1);
    expect(get(h, "x", 1, 1)).toBeUndefined();
    expect(get(h, "y", 1, 1)?.serials).toEqual([3, 2]);
    expect(get(h, "z", 1, 1)?.serials).toEqual([3]);
    put(h, "w", [1, 2, 3, 4, 5], [1, 2, 3, 4, 5], true, 1); // more than the whole budget
    expect(get(h, "w", 1, 1)).toBeUndefined();
  });
});
