import { describe, expect, test } from "bun:test";
import { finalizeEvent, getEventHash } from "nostr-tools/pure";
import {
  commitment,
  commitmentOf,
  computeId,
  encodeCommitment,
  STORED_ID_OFFSET,
  STORED_PUBKEY_OFFSET,
  storedCreatedAt,
  storedJson,
  storedKind,
} from "./canonical.ts";
import type { NostrEvent } from "./event.ts";

const SK = new Uint8Array(32).fill(7);
/** A signed event as a plain object (nostr-tools marks its events with a symbol). */
function sign(content: string, tags: string[][] = [], kind = 1): NostrEvent {
  const { id, pubkey, created_at, sig } = finalizeEvent(
    { kind, created_at: 1_700_000_000, tags, content },
    SK,
  );
  return { id, pubkey, created_at, kind, tags, content, sig };
}
const sha256 = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");

/** Contents that exercise every escape rule of NIP-01's commitment. */
const CONTENTS = [
  "plain",
  'quote " backslash \\ slash /',
  "line\nfeed\ttab\rreturn\bbackspace\fformfeed",
  "bell \u0007 nul \u0000 unit separator \u001f delete \u007f",
  "literal backslash-u: \\u0007 and \\\\u0000",
  "émoji 🎉 and CJK 漢字, lone surrogate \ud800",
];

describe("the NIP-01 commitment", () => {
  test("is [0,pubkey,created_at,kind,tags,content] with only the seven escapes; other controls raw", () => {
    const e = sign("a\u0001b\nc", [["t", "x\u0002y"]]);
    const expected = `[0,"${e.pubkey}",1700000000,1,[["t","x\u0002y"]],"a\u0001b\\nc"]`;
    expect(commitment(e)).toBe(expected);
    expect(computeId(e)).toBe(sha256(expected));
    // nostr-tools hashes JSON.stringify's \u0001 escapes instead: NIP-01 asks for the raw byte.
    expect(getEventHash(e)).toBe(sha256(JSON.stringify([0, e.pubkey, 1700000000, 1, e.tags, e.content])));
    expect(computeId(e)).not.toBe(getEventHash(e));
  });

  test("hashes to the id nostr-tools computes wherever the two agree (no raw control characters)", () => {
    for (const content of CONTENTS.filter((c) => !/[\u0000-\u0007\u000b\u000e-\u001f]/.test(c))) {
      const e = sign(content, [["t", content]]);
      expect([content, computeId(e)]).toEqual([content, getEventHash(e)]);
      expect(computeId(e)).toBe(e.id);
    }
  });

  test("encodeCommitment writes the same UTF-8 bytes as the string, from either path", () => {
    for (const content of CONTENTS) {
      const e = sign(content, [["t", content]]);
      const tags = JSON.stringify(e.tags);
      const json = JSON.stringify(e.content);
      const out = Buffer.alloc(3 * (tags.length + json.length) + 64 + 8);
      const end = encodeCommitment(e, tags, json, out, 8);
      expect([content, out.subarray(8, end).toString("utf8")]).toEqual([
        content,
        commitmentOf(e, tags, json),
      ]);
      expect(out.subarray(8, end).equals(Buffer.from(commitment(e), "utf8"))).toBe(true);
    }
  });
});

describe("the stored JSON", () => {
  test("has a fixed key order, id and pubkey at fixed offsets, and parses back to the event", () => {
    for (const content of CONTENTS) {
      const e = sign(content, [["e", "x"]], 30023);
      const json = storedJson(e);
      expect(
        json.startsWith(`{"id":"${e.id}","pubkey":"${e.pubkey}","created_at":1700000000,"kind":30023,`),
      ).toBe(true);
      expect(json.slice(STORED_ID_OFFSET, STORED_ID_OFFSET + 64)).toBe(e.id);
      expect(json.slice(STORED_PUBKEY_OFFSET, STORED_PUBKEY_OFFSET + 64)).toBe(e.pubkey);
      expect(JSON.parse(json)).toEqual(e);
      expect(storedKind(json)).toBe(30023);
    }
  });

  test("storedKind reads kinds of every width", () => {
    for (const kind of [0, 7, 65535]) expect(storedKind(storedJson(sign("", [], kind)))).toBe(kind);
  });

  test("storedCreatedAt and storedKind read the text and its UTF-8 bytes alike", () => {
    for (const createdAt of [0, 9, 1700000000, 4294967296]) {
      const e = { ...sign("é ✓ \u0001", [["t", "x"]], 1), created_at: createdAt };
      const json = storedJson(e);
      expect(storedCreatedAt(json)).toBe(createdAt);
      expect(storedCreatedAt(Buffer.from(json))).toBe(createdAt);
      expect(storedKind(Buffer.from(json))).toBe(1);
    }
  });
});
