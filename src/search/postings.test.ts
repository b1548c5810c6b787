// The walks over a token's blocks read narrow (format 4) and wide (format 3) blocks alike: the
// same postings written either way, or half one way and half the other as after an upgrade,
// stream, seek each other and are looked up to the same answers, fields and all.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { Rng } from "../../bench/load/prng.ts";
import type { BlockFormat, FlatPostings, Posting } from "./blocks.ts";
import { blockKey, decodeBlock, encodeBlocks, NARROW, readHeader, tokenPrefix, WIDE } from "./blocks.ts";
import type { BlockView } from "./postings.ts";
import { PostingLookup, PostingStream, VIEW_ENCODER } from "./postings.ts";

const dir = mkdtempSync(join(tmpdir(), "relay-postings-"));
const env = open({ path: dir, maxDbs: 4, compression: false, noSubdir: false, mapSize: 2 ** 30 } as never);
const db = env.openDB({ name: "blocks", keyEncoding: "binary", encoding: "binary" });
const view = env.openDB({
  name: "blocks",
  keyEncoding: "binary",
  encoder: VIEW_ENCODER,
} as never) as BlockView;

afterAll(async () => {
  await env.close();
  rmSync(dir, { recursive: true, force: true });
});

const rng = new Rng(7);
/** A token's postings: mostly narrow values, now and then one that needs a wide column. */
function postingsOf(every: number, count: number): Posting[] {
  let serial = 0;
  return Array.from({ length: count }, () => {
    serial += 1 + rng.index(every) + (rng.float() < 0.01 ? 70_000 : 0);
    return {
      serial,
      tf: rng.float() < 0.02 ? 300 : 1 + rng.index(4),
      length: rng.float() < 0.05 ? 1000 : 1 + rng.index(200),
      kind: rng.float() < 0.03 ? 30023 : 1,
      createdAt: 1_700_000_000 + rng.index(20_000) + (rng.float() < 0.01 ? 100_000 : 0),
    };
  });
}
const flat = (ps: Posting[]): FlatPostings =>
  ps.flatMap((p) => [p.serial, p.tf, p.length, p.kind, p.createdAt]);

/** Writes a token's postings in two batches (the second continues the first's last block). */
function write(token: string, ps: Posting[], first: BlockFormat, second: BlockFormat): void {
  const prefix = tokenPrefix(token);
  const half = Math.floor(ps.length / 2);
  const a = encodeBlocks(flat(ps.slice(0, half)), half, undefined, 4000, first);
  const last = a.at(-1)!;
  const b = encodeBlocks(
    flat(ps.slice(half)),
    ps.length,
    { ...last, header: readHeader(last.bytes) },
    4000,
    second,
  );
  env.transactionSync(() => {
    for (const blk of [...a, ...b]) db.put(blockKey(prefix, blk.firstSerial), blk.bytes);
  });
}

const A = postingsOf(3, 6000);
// B holds 40% of A's documents and others between them
const inA = new Set(A.map((p) => p.serial));
const B = A.flatMap((p) => [
  ...(rng.float() < 0.4 ? [{ ...p, tf: 1 + rng.index(3) }] : []),
  ...(rng.float() < 0.2 && !inA.has(p.serial + 1) ? [{ ...p, serial: p.serial + 1 }] : []),
]);
const WAYS: [string, BlockFormat, BlockFormat][] = [
  ["narrow", NARROW, NARROW],
  ["wide", WIDE, WIDE],
  ["wide then narrow", WIDE, NARROW],
];
for (const [name, first, second] of WAYS) {
  write(`a-${name}`, A, first, second);
  write(`b-${name}`, B, first, second);
}

const fields = (st: PostingStream): Posting => ({
  serial: st.serial,
  tf: st.tf,
  length: st.length,
  kind: st.kind,
  createdAt: st.createdAt,
});

test("the blocks are what their format says: narrow ones mostly narrower", () => {
  const formats = (token: string) =>
    Array.from(db.getRange(tokenRange(token)), ({ value }) => (value as Buffer)[0]);
  expect(new Set(formats("a-narrow"))).toEqual(new Set([NARROW]));
  expect(new Set(formats("a-wide"))).toEqual(new Set([WIDE]));
  expect(new Set(formats("a-wide then narrow"))).toEqual(new Set([WIDE, NARROW]));
  const postings = (token: string) =>
    Array.from(db.getRange(tokenRange(token)), ({ value }) => decodeBlock(value as Buffer)).flat();
  for (const [name] of WAYS) expect(postings(`a-${name}`)).toEqual(A);
});

const tokenRange = (token: string) => {
  const p = tokenPrefix(token);
  return { start: blockKey(p, 0), end: blockKey(p, Number.MAX_SAFE_INTEGER) };
};

test.each(WAYS)("%s blocks: a stream gives every posting with its fields, in order", (name) => {
  PostingStream.groupSize = 3;
  try {
    const st = new PostingStream(view, tokenPrefix(`a-${name}`));
    const got: Posting[] = [];
    while (st.next()) got.push(fields(st));
    st.close();
    expect(got).toEqual(A);
  } finally {
    PostingStream.groupSize = 32;
  }
});

test.each(WAYS)("%s blocks: seeks land on the first posting at or after each target", (name) => {
  const st = new PostingStream(view, tokenPrefix(`a-${name}`));
  st.next();
  let at = 0;
  for (let target = 1; target < A.at(-1)!.serial + 10; target += 1 + rng.index(400)) {
    while (at < A.length && A[at]!.serial < target) at++;
    const found = st.seek(target);
    expect(found).toBe(at < A.length);
    if (found) expect(fields(st)).toEqual(A[at]!);
  }
  st.close();
});

test.each(WAYS)("%s blocks: two words seeking each other meet on exactly the serials both hold", (name) => {
  const inB = new Set(B.map((p) => p.serial));
  const want = A.filter((p) => inB.has(p.serial)).map((p) => p.serial);
  const a = new PostingStream(view, tokenPrefix(`a-${name}`));
  const b = new PostingStream(view, tokenPrefix(`b-${name}`));
  const got: number[] = [];
  // leapfrog: each stream seeks to the other's serial
  let more = a.next();
  while (more && b.seek(a.serial)) {
    if (b.serial === a.serial) {
      got.push(a.serial);
      more = a.next();
    } else more = a.seek(b.serial);
  }
  a.close();
  b.close();
  expect(want.length).toBeGreaterThan(100);
  expect(got).toEqual(want);
});

test.each(WAYS)("%s blocks: a lookup by serial gives the posting's tf, 0 where there is none", (name) => {
  const tf = new Map(A.map((p) => [p.serial, p.tf]));
  const look = new PostingLookup(view, tokenPrefix(`a-${name}`));
  for (let s = 0; s < A.at(-1)!.serial + 5; s += 1 + rng.index(7)) expect(look.tf(s)).toBe(tf.get(s) ?? 0);
});
