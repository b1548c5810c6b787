import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Filter } from "../nostr/filter.ts";
import { hexBytes, kindBytes, pubkindPrefix, TIME_PREFIX, tagPrefix } from "../store/keys.ts";
import { closeStore, openStore } from "../store/store.ts";
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
  const { db, ...rest } = p;
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
const scan = (
  index: string,
  prefixes: Buffer[],
  residual: "none" | "fast" | "full",
  pairs?: { authors: string[]; kinds: number[] },
) => ({
  type: "scan",
  index,
  db: index,
  prefixes,
  needsCheck: residual !== "none",
  residual,
  pairs,
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
        // each range's (author, kind), deduplicated in the prefixes' order
        { authors: [A, B], kinds: [1, 7] },
      ),
    );
    expect(plan({ authors: [A], kinds: [1], tags: [["e", [A]]] })).toEqual(
      scan("pubkind", [pubkindPrefix(hexBytes(A), 1)], "full", { authors: [A], kinds: [1] }),
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
