// The packed storage against nostr-tools' vector storage: same order, same fingerprints for
// every range, so the codec sees no difference but the cost of a fingerprint.
import { expect, test } from "bun:test";
import { nip77 } from "nostr-tools";
import { Gen } from "../../test/gen.ts";
import { PackedStorage, sortItems } from "./negentropy.ts";

const { NegentropyStorageVector } = nip77;

test("fingerprints and lower bounds equal nostr-tools' vector storage on every range", () => {
  const g = new Gen(61);
  const n = 200;
  const times = new Float64Array(n);
  const ids = new Uint8Array(n * 32);
  const vector = new NegentropyStorageVector();
  for (let i = 0; i < n; i++) {
    times[i] = 1000 + g.int(20); // ties, so ids decide the order
    const id = g.hex(64);
    ids.set(Buffer.from(id, "hex"), i * 32);
    vector.insert(times[i]!, id);
  }
  vector.seal();
  const sorted = sortItems(times, ids);
  const packed = new PackedStorage(sorted.times, sorted.ids);
  expect(packed.size()).toBe(n);
  for (let i = 0; i < n; i++) {
    expect(packed.getItem(i).timestamp).toBe(vector.getItem(i).timestamp);
    expect(Buffer.from(packed.getItem(i).id).toString("hex")).toBe(
      Buffer.from(vector.getItem(i).id).toString("hex"),
    );
  }
  for (let a = 0; a <= n; a += 7)
    for (let b = a; b <= n; b += 5)
      expect([...packed.fingerprint(a, b)]).toEqual([...vector.fingerprint(a, b)]);
  for (let k = 0; k < 100; k++) {
    const bound = { timestamp: 1000 + g.int(22), id: Buffer.from(g.hex(2 * g.int(33)), "hex") };
    expect(packed.findLowerBound(0, n, bound)).toBe(vector.findLowerBound(0, n, bound));
  }
});

test("an id reached twice is kept once", () => {
  const id = Buffer.alloc(32, 7);
  const s = sortItems(new Float64Array([5, 5]), Buffer.concat([id, id]));
  expect(s.times.length).toBe(1);
});
