import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Filter } from "../nostr/filter.ts";
import { hexBytes, kindBytes, pubkindPrefix, TIME_PREFIX, tagPrefix } from "../store/keys.ts";
import { closeStore, openStore } from "../store/store.ts";
import { rangeName } from "./heads.ts";
import type { Plan } from "./plan.ts";
import { planFilter } from "./plan.ts";

const dir = mkdtempSync(join(tmpdir(), "plan-test-"));
const store = openStore(dir);
afterAll(async () => {
  await closeStore(store);
  rmSync(dir, { recursive: true, force: true });
});

const A = "a".repeat(64);
const B = "b".repeat(64);

/** A plan with its database named, for comparing. */
function described(p: Plan): Record<string, unknown> {
  if (p.type !== "scan") return p;
  // The ranges' names (for the heads kept between REQs) have a test of their own.
  const { db, names: _, ...rest } = p;
  const dbs = {
    pubkind: store.pubkind,
    tag: store.tag,
    pubkey: store.pubkey,
    kind: store.kind,
    time: store.time,
  };
  return { ...rest, db: Object.entries(dbs).find(([, d]) => d === db)?.[0] };
}
const plan = (f: Filter) => described(planFilter(store, f));
const scan = (index: string, prefixes: Buffer[], residual: "none" | "fast" | "full") => ({
  type: "scan",
  index,
  db: index,
  prefixes,
  needsCheck: residual !== "none",
  residual,
});

describe("planFilter", () => {
  test("a filter that can match nothing is empty", () => {
    for (const f of [
      { ids: [] },
      { authors: [] },
      { kinds: [] },
      { tags: [["e", []]] },
      { since: 5, until: 4 },
    ] as Filter[])
      expect([f, plan(f)]).toEqual([f, { type: "empty" }]);
    expect(plan({ since: 5, until: 5 })).toEqual(scan("time", [TIME_PREFIX], "none"));
  });

  test("ids win over everything, deduplicated", () => {
    expect(plan({ ids: [A, B, A], authors: [A], kinds: [1] })).toEqual({ type: "ids", ids: [A, B] });
  });

  test("authors × kinds up to 1024 pairs use pubkind; tags left over need a full check", () => {
    expect(plan({ authors: [A, B, A], kinds: [1, 7] })).toEqual(
      scan(
        "pubkind",
        [
          pubkindPrefix(hexBytes(A), 1),
          pubkindPrefix(hexBytes(A), 7),
          pubkindPrefix(hexBytes(B), 1),
          pubkindPrefix(hexBytes(B), 7),
        ],
        "none",
      ),
    );
    expect(plan({ authors: [A], kinds: [1], tags: [["e", [A]]] })).toEqual(
      scan("pubkind", [pubkindPrefix(hexBytes(A), 1)], "full"),
    );
    const authors = Array.from({ length: 33 }, (_, i) => i.toString(16).padStart(64, "0"));
    const kinds = Array.from({ length: 32 }, (_, i) => i);
    expect(plan({ authors, kinds }).index).toBe("pubkey");
    expect(plan({ authors: authors.slice(0, 32), kinds }).index).toBe("pubkind");
  });

  test("the tag with the fewest values, if all of them fit in the index", () => {
    expect(
      plan({
        tags: [
          ["t", ["x", "y"]],
          ["p", [A]],
        ],
      }),
    ).toEqual(scan("tag", [tagPrefix("p", A)!], "full"));
    expect(plan({ tags: [["t", ["x", "x"]]], kinds: [1] })).toEqual(
      scan("tag", [tagPrefix("t", "x")!], "fast"),
    );
    expect(
      plan({
        tags: [["t", ["x"]]],
        authors: [A, B],
        kinds: Array(1000)
          .fill(1)
          .map((k, i) => k + i),
      }).index,
    ).toBe("tag");
    expect(plan({ tags: [["t", ["x"]]] })).toEqual(scan("tag", [tagPrefix("t", "x")!], "none"));
    // A value over 255 bytes is not indexed: that tag cannot be the plan.
    expect(plan({ tags: [["t", ["x".repeat(256)]]], kinds: [1] })).toEqual(
      scan("kind", [kindBytes(1)], "full"),
    );
  });

  test("then authors, then kinds, then time", () => {
    expect(plan({ authors: [A] })).toEqual(scan("pubkey", [hexBytes(A)], "none"));
    expect(plan({ authors: [A], tags: [["t", ["x".repeat(256)]]] })).toEqual(
      scan("pubkey", [hexBytes(A)], "full"),
    );
    expect(plan({ kinds: [1, 1, 3] })).toEqual(scan("kind", [kindBytes(1), kindBytes(3)], "none"));
    expect(plan({ since: 1, until: 9, limit: 3 })).toEqual(scan("time", [TIME_PREFIX], "none"));
  });
});

describe("the ranges' names", () => {
  test("each range is named as a batch's view names what it touches (heads.ts forgets them by it)", () => {
    const names = (f: Filter) => {
      const p = planFilter(store, f);
      return p.type === "scan" ? p.names : [];
    };
    expect(names({ authors: [A, B], kinds: [1, 7] })).toEqual([
      rangeName.pubkind(A, 1),
      rangeName.pubkind(A, 7),
      rangeName.pubkind(B, 1),
      rangeName.pubkind(B, 7),
    ]);
    expect(names({ tags: [["t", ["nostr", "bun"]]] })).toEqual([
      rangeName.tag("t nostr"),
      rangeName.tag("t bun"),
    ]);
    expect(names({ tags: [["e", [A]]], kinds: [1] })).toEqual([rangeName.tag(`e ${A}`)]);
    expect(names({ authors: [B] })).toEqual([rangeName.pubkey(B)]);
    expect(names({ kinds: [0, 3] })).toEqual([rangeName.kind(0), rangeName.kind(3)]);
    expect(names({ since: 5 })).toEqual([rangeName.time()]);
    // Distinct ranges have distinct names.
    const all = [
      rangeName.pubkey(A),
      rangeName.pubkind(A, 1),
      rangeName.kind(1),
      rangeName.time(),
      rangeName.tag(`p ${A}`),
      rangeName.tag("t 1"),
    ].map((r) => `${r.at}/${r.n}`);
    expect(new Set(all).size).toBe(all.length);
  });
});
