// Index key encoding (src/store/keys.ts) against the obvious Buffer.concat + BigInt version: every
// stored event writes 4 + (tags) keys and every scan builds range bounds, so this is per-event cost.
import { bench, do_not_optimize, group, run, summary } from "mitata";
import { hexBytes, indexKey, tagPrefix } from "../../src/store/keys.ts";
import { AUTHORS, EVENTS, Ring } from "./fixtures.ts";

const u64 = (n: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
};

/** The layout of keys.ts written the straightforward way. */
function naiveTagKey(letter: string, value: string, createdAt: number, serial: number): Buffer {
  const hex = /^[0-9a-f]{64}$/.test(value);
  const v = hex ? Buffer.from(value, "hex") : Buffer.from(value, "utf8");
  const head = Buffer.from([letter.charCodeAt(0) | (hex ? 0x80 : 0), v.length]);
  return Buffer.concat([head, v, u64(createdAt), u64(serial)]);
}

const naivePubkeyKey = (pk: string, createdAt: number, serial: number): Buffer =>
  Buffer.concat([Buffer.from(pk, "hex"), u64(createdAt), u64(serial)]);

const ids = new Ring(EVENTS.map((e) => e.id));
const words = new Ring(["bitcoin", "nostr", "coffee", "art", "a-much-longer-hashtag-value"]);
const pks = new Ring(AUTHORS);
let serial = 1;

// The baseline must produce the very same bytes, or the comparison means nothing.
for (const [a, b] of [
  [
    naiveTagKey("e", EVENTS[0]!.id, 1_700_000_000, 7),
    indexKey(tagPrefix("e", EVENTS[0]!.id)!, 1_700_000_000, 7),
  ],
  [naiveTagKey("t", "nostr", 1_700_000_000, 7), indexKey(tagPrefix("t", "nostr")!, 1_700_000_000, 7)],
  [naivePubkeyKey(AUTHORS[0]!, 1_700_000_000, 7), indexKey(hexBytes(AUTHORS[0]!), 1_700_000_000, 7)],
] as const)
  if (!a.equals(b)) throw new Error("keys.bench: baseline and keys.ts disagree");

summary(() => {
  group("tag key #e (64-hex value → 32 raw bytes)", () => {
    bench("naive Buffer.concat + BigInt", () =>
      do_not_optimize(naiveTagKey("e", ids.next(), 1_700_000_000 + serial, serial++)),
    ).baseline(true);
    bench("keys.ts tagPrefix + indexKey", () =>
      do_not_optimize(indexKey(tagPrefix("e", ids.next())!, 1_700_000_000 + serial, serial++)),
    );
  });

  group("tag key #t (short UTF-8 value)", () => {
    bench("naive Buffer.concat + BigInt", () =>
      do_not_optimize(naiveTagKey("t", words.next(), 1_700_000_000 + serial, serial++)),
    ).baseline(true);
    bench("keys.ts tagPrefix + indexKey", () =>
      do_not_optimize(indexKey(tagPrefix("t", words.next())!, 1_700_000_000 + serial, serial++)),
    );
  });

  group("pubkey key (32 bytes + created_at + serial)", () => {
    bench("naive Buffer.concat + BigInt", () =>
      do_not_optimize(naivePubkeyKey(pks.next(), 1_700_000_000 + serial, serial++)),
    ).baseline(true);
    bench("keys.ts hexBytes + indexKey", () =>
      do_not_optimize(indexKey(hexBytes(pks.next()), 1_700_000_000 + serial, serial++)),
    );
  });
});

if (import.meta.main) await run();
