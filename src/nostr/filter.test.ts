import { describe, expect, test } from "bun:test";
import { invalid } from "../wire/reasons.ts";
import type { NostrEvent } from "./event.ts";
import type { Filter } from "./filter.ts";
import { hasTag, matchFilter, newestFirst, parseFilter } from "./filter.ts";

const LIM = { maxFilterValues: 3 };
const A = "a".repeat(64);
const B = "b".repeat(64);

describe("parseFilter", () => {
  test("keeps every NIP-01 field, tags as [letter, values] in the order given", () => {
    expect(
      parseFilter(
        {
          ids: [A],
          authors: [B],
          kinds: [0, 65535],
          since: 0,
          until: 9,
          limit: 5,
          "#e": [A],
          "#T": ["x"],
          search: "q",
        },
        LIM,
      ),
    ).toEqual({
      ids: [A],
      authors: [B],
      kinds: [0, 65535],
      since: 0,
      until: 9,
      limit: 5,
      tags: [
        ["e", [A]],
        ["T", ["x"]],
      ],
      search: "q",
    });
    expect(parseFilter({}, LIM)).toEqual({});
    expect(parseFilter({ ids: [] }, LIM)).toEqual({ ids: [] });
  });

  test("refuses with invalid: and says which field and why", () => {
    const cases: [unknown, string][] = [
      [[], "a filter must be a JSON object"],
      [null, "a filter must be a JSON object"],
      [{ ids: A }, "ids must be an array"],
      [{ authors: [A.toUpperCase()] }, "authors must be 64-character lowercase hex strings"],
      [{ ids: [A, A, A, A] }, "ids has more than 3 values"],
      [{ kinds: [1.5] }, "kinds must be integers between 0 and 65535"],
      [{ kinds: [65536] }, "kinds must be integers between 0 and 65535"],
      [{ kinds: [1, 2, 3, 4] }, "kinds has more than 3 values"],
      [{ since: -1 }, "since must be a non-negative integer"],
      [{ until: "9" }, "until must be a non-negative integer"],
      [{ limit: 2 ** 53 }, "limit must be a non-negative integer"],
      [{ search: 5 }, "search must be a string"],
      [{ "#e": "x" }, "#e must be an array of strings"],
      [{ "#e": [1] }, "#e must be an array of strings"],
      [{ "#e": ["1", "2", "3", "4"] }, "#e has more than 3 values"],
      [{ "#ee": ["x"] }, 'unknown filter field "#ee"'],
      [{ foo: 1 }, 'unknown filter field "foo"'],
    ];
    for (const [raw, message] of cases) expect([raw, parseFilter(raw, LIM)]).toEqual([raw, invalid(message)]);
  });
});

const ev = (over: Partial<NostrEvent> = {}): NostrEvent => ({
  id: A,
  pubkey: B,
  created_at: 100,
  kind: 1,
  tags: [["e", "x"], ["p", "y", "wss://r"], ["t"]],
  content: "",
  sig: "",
  ...over,
});

describe("matchFilter", () => {
  test("every condition must hold; since and until are inclusive", () => {
    const yes: Filter[] = [
      {},
      { ids: [B, A] },
      { authors: [B] },
      { kinds: [0, 1] },
      { since: 100, until: 100 },
      { tags: [["e", ["x", "z"]]] },
      {
        tags: [
          ["e", ["x"]],
          ["p", ["y"]],
        ],
      },
      { ids: [A], authors: [B], kinds: [1], since: 99, until: 101, limit: 0 },
    ];
    const no: Filter[] = [
      { ids: [B] },
      { authors: [A] },
      { kinds: [2] },
      { since: 101 },
      { until: 99 },
      { tags: [["e", ["y"]]] },
      {
        tags: [
          ["e", ["x"]],
          ["p", ["x"]],
        ],
      },
      { tags: [["t", [""]]] },
      { ids: [] },
    ];
    for (const f of yes) expect([f, matchFilter(f, ev())]).toEqual([f, true]);
    for (const f of no) expect([f, matchFilter(f, ev())]).toEqual([f, false]);
  });

  test("a search condition is decided by the matcher given, and matches nothing without one", () => {
    expect(matchFilter({ search: "hello" }, ev())).toBe(false);
    const seen: string[] = [];
    const matcher = (q: string) => {
      seen.push(q);
      return q === "hello";
    };
    expect(matchFilter({ search: "hello" }, ev(), matcher)).toBe(true);
    expect(matchFilter({ search: "bye" }, ev(), matcher)).toBe(false);
    expect(seen).toEqual(["hello", "bye"]);
  });

  test("hasTag looks at each tag's first value only", () => {
    expect(hasTag(ev(), "p", ["y"])).toBe(true);
    expect(hasTag(ev(), "p", ["wss://r"])).toBe(false);
    expect(hasTag(ev(), "t", [])).toBe(false);
  });
});

test("newestFirst: created_at descending, then id ascending (NIP-01)", () => {
  const xs = [
    { created_at: 1, id: "b" },
    { created_at: 2, id: "c" },
    { created_at: 1, id: "a" },
    { created_at: 2, id: "a" },
  ];
  expect(xs.sort(newestFirst)).toEqual([
    { created_at: 2, id: "a" },
    { created_at: 2, id: "c" },
    { created_at: 1, id: "a" },
    { created_at: 1, id: "b" },
  ]);
});
