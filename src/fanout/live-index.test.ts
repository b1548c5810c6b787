import { describe, expect, test } from "bun:test";
import type { NostrEvent } from "../nostr/event.ts";
import type { Filter } from "../nostr/filter.ts";
import type { LiveSub } from "./live-index.ts";
import { LiveIndex } from "./live-index.ts";

class Sub implements LiveSub {
  stamp = 0;
  constructor(
    readonly name: string,
    readonly filters: readonly Filter[],
  ) {}
}

const A = "a".repeat(64);
const B = "b".repeat(64);
const C = "c".repeat(64);
const ev = (over: Partial<NostrEvent> = {}): NostrEvent => ({
  id: A,
  pubkey: B,
  created_at: 100,
  kind: 1,
  tags: [
    ["e", C],
    ["t", "nostr"],
  ],
  content: "hello",
  sig: "",
  ...over,
});

/** The names of the subscriptions visited for an event, in visiting order. */
function visited(index: LiveIndex<Sub>, e: NostrEvent): string[] {
  const out: string[] = [];
  index.match(e, (s) => out.push(s.name));
  return out;
}

describe("LiveIndex", () => {
  test("an event visits exactly the subscriptions with a matching filter, whichever field indexes it", () => {
    const index = new LiveIndex<Sub>();
    const subs = [
      new Sub("by id", [{ ids: [A] }]),
      new Sub("by other id", [{ ids: [C] }]),
      new Sub("by author", [{ authors: [B], kinds: [1] }]),
      new Sub("by author, wrong kind", [{ authors: [B], kinds: [7] }]),
      new Sub("by tag", [{ tags: [["t", ["nostr", "bitcoin"]]] }]),
      new Sub("by two tags, one wrong", [
        {
          tags: [
            ["e", [C]],
            ["t", ["other"]],
          ],
        },
      ]),
      new Sub("by kind", [{ kinds: [1] }]),
      new Sub("everything since 50", [{ since: 50 }]),
      new Sub("everything until 50", [{ until: 50 }]),
    ];
    for (const s of subs) index.add(s);
    expect(index.size).toBe(9);
    expect(visited(index, ev()).sort()).toEqual(
      ["by author", "by id", "by kind", "by tag", "everything since 50"].sort(),
    );
    expect(visited(index, ev({ id: C, kind: 7, tags: [] })).sort()).toEqual(
      ["by author, wrong kind", "by other id", "everything since 50"].sort(),
    );
  });

  test("a subscription with several matching filters is visited once per event, and again for the next", () => {
    const index = new LiveIndex<Sub>();
    const both = new Sub("both", [{ ids: [A] }, { kinds: [1] }, {}, { tags: [["e", [C]]] }]);
    index.add(both);
    expect(visited(index, ev())).toEqual(["both"]);
    expect(visited(index, ev())).toEqual(["both"]);
  });

  test("removed subscriptions are never visited; removing twice or an unknown one is harmless", () => {
    const index = new LiveIndex<Sub>();
    const a = new Sub("a", [{ authors: [B] }, {}]);
    const b = new Sub("b", [{ tags: [["t", ["nostr"]]] }]);
    index.add(a);
    index.add(b);
    index.remove(a);
    index.remove(a);
    index.remove(new Sub("never added", [{}]));
    expect(index.size).toBe(1);
    expect(visited(index, ev())).toEqual(["b"]);
    index.remove(b);
    expect(index.size).toBe(0);
    expect(visited(index, ev())).toEqual([]);
  });

  test("a tag value is keyed with its letter: #p x does not match an e tag x", () => {
    const index = new LiveIndex<Sub>();
    index.add(new Sub("p", [{ tags: [["p", [C]]] }]));
    expect(visited(index, ev())).toEqual([]);
    expect(visited(index, ev({ tags: [["p", C]] }))).toEqual(["p"]);
  });

  test("search conditions are decided by the matcher given; none match without one", () => {
    const plain = new LiveIndex<Sub>();
    plain.add(new Sub("search", [{ search: "hello" }]));
    expect(visited(plain, ev())).toEqual([]);
    const searching = new LiveIndex<Sub>((q, e) => e.content.includes(q));
    searching.add(new Sub("hello", [{ search: "hello" }]));
    searching.add(new Sub("bye", [{ search: "bye", kinds: [1] }]));
    expect(visited(searching, ev())).toEqual(["hello"]);
  });
});
