import { describe, expect, test } from "bun:test";
import type { NostrEvent } from "../nostr/event.ts";
import { fmtSeconds, RetentionRules } from "./rules.ts";

const NOW = 1_700_000_000;
const ev = (kind: number, created_at: number, id = "5".repeat(64)): NostrEvent =>
  ({ id, pubkey: "a".repeat(64), kind, created_at, tags: [], content: "", sig: "" }) as NostrEvent;

describe("retention rules", () => {
  // NIP-11's own example, as written there.
  const nip11 = new RetentionRules([
    { kinds: [0, 1, [5, 7], [40, 49]], time: 3600 },
    { kinds: [[40000, 49999]], time: 100 },
    { kinds: [[30000, 39999]], count: 1000 },
    { time: 3600, count: 10000 },
  ]);

  test("the first rule whose kinds include a kind governs it; a rule without kinds governs the rest", () => {
    const n = (k: number) => nip11.ruleFor(k)?.n;
    expect([0, 1, 5, 6, 7, 40, 49, 40000, 49999, 30000, 39999, 2, 4, 8, 50, 10002].map(n)).toEqual([
      1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 4, 4, 4,
    ]);
    const partial = new RetentionRules([{ kinds: [1], time: 60 }]);
    expect([partial.ruleFor(1)?.n, partial.ruleFor(7)]).toEqual([1, undefined]);
  });

  test("kinds grouped by their rule, each group sorted, ungoverned kinds left out", () => {
    const r = new RetentionRules([{ kinds: [[1, 7]], time: 60 }, { kinds: [30023] }]);
    const g = r.governed([7, 30023, 1, 9, 5]);
    expect([...g].map(([rule, kinds]) => [rule.n, kinds])).toEqual([
      [1, [1, 5, 7]],
      [2, [30023]],
    ]);
  });

  test("an event older than its rule's time is refused with the rule named; a newer one passes", () => {
    const r = new RetentionRules([{ kinds: [1], time: 3600 }]);
    expect(r.verdict(ev(1, NOW - 3600), NOW)).toBeUndefined();
    expect(r.verdict(ev(1, NOW - 3601), NOW)).toEqual({
      reject: true,
      prefix: "blocked",
      message:
        'this relay keeps kind 1 events for 1 hour after their created_at, and this one is older (retention rule 1: {"kinds":[1],"time":3600})',
    });
    expect(r.verdict(ev(7, 0), NOW)).toBeUndefined();
  });

  test("a time or count of 0 refuses every event of the rule's kinds; null is no limit", () => {
    const r = new RetentionRules([{ kinds: [4], time: 0 }, { kinds: [1059], count: 0 }, { time: null }]);
    expect(r.verdict(ev(4, NOW + 10), NOW)?.message).toBe(
      'this relay does not keep kind 4 events (retention rule 1: {"kinds":[4],"time":0})',
    );
    expect(r.verdict(ev(1059, NOW), NOW)?.prefix).toBe("blocked");
    expect(r.verdict(ev(1, 0), NOW)).toBeUndefined();
  });

  test("a full count rule refuses what is older than the oldest event it keeps, in NIP-01 order", () => {
    const r = new RetentionRules([{ kinds: [7], count: 3 }]);
    const rule = r.ruleFor(7)!;
    expect(r.verdict(ev(7, 1), NOW)).toBeUndefined();
    r.setFloor(rule, { time: 100, id: "5".repeat(64) });
    expect(r.verdict(ev(7, 99), NOW)?.message).toBe(
      `this relay keeps the newest 3 events of the kinds this rule covers, and this kind 7 event is older than all of them (retention rule 1: {"kinds":[7],"count":3})`,
    );
    // Equal created_at: the lower id comes first (is newer) in NIP-01 order.
    expect(r.verdict(ev(7, 100, "6".repeat(64)), NOW)?.prefix).toBe("blocked");
    expect(r.verdict(ev(7, 100, "4".repeat(64)), NOW)).toBeUndefined();
    expect(r.verdict(ev(7, 100, "5".repeat(64)), NOW)).toBeUndefined();
    expect(r.verdict(ev(7, 101), NOW)).toBeUndefined();
    r.setFloor(rule, undefined);
    expect(r.verdict(ev(7, 1), NOW)).toBeUndefined();
  });

  test("seconds read as the largest whole unit", () => {
    expect([1, 90, 120, 3600, 7200, 86400, 90000].map(fmtSeconds)).toEqual([
      "1 second",
      "90 seconds",
      "2 minutes",
      "1 hour",
      "2 hours",
      "1 day",
      "25 hours",
    ]);
  });
});
