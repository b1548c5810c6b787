// The derived environment written through a writable map (store.ts, preallocate.ts): its file is
// as long as the map but takes disk only for the data and the room allocated ahead of the next
// write; a write that cannot get its room fails with ENOSPC instead of taking the process down
// with a SIGBUS; and opening it again never cuts the file short.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, statfsSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MIN_HEADROOM } from "./preallocate.ts";
import { closeStore, DERIVED_DIR, derivedWrite, openStore } from "./store.ts";
import type { Store } from "./types.ts";

const MIB = 2 ** 20;
const dirs: string[] = [];
const tempDir = (prefix: string): string => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
const derivedFile = (dir: string) => join(dir, DERIVED_DIR, "data.mdb");

/** The derived environment's data end: its last page in use, as LMDB reports it. */
function dataEnd(s: Store): number {
  const env = (
    s.derived as unknown as { env: { info(): { lastPageNumber: number }; stat(): { pageSize: number } } }
  ).env;
  return (env.info().lastPageNumber + 1) * env.stat().pageSize;
}

/** Writes `n` keys of 200 bytes each in one derived transaction. */
function fill(s: Store, from: number, n: number): void {
  const db = s.derived.openDB({ name: "filler", keyEncoding: "binary", encoding: "binary" });
  derivedWrite(s, () => {
    for (let i = from; i < from + n; i++) {
      const k = Buffer.alloc(8);
      k.writeUInt32BE(Math.imul(i, 2654435761) >>> 0, 0);
      k.writeUInt32BE(i, 4);
      db.put(k, Buffer.alloc(200, i & 0xff));
    }
  });
}

test("a store written through a writable map takes disk for its data and the room ahead, not for its length", async () => {
  const dir = tempDir("prealloc-");
  const s = openStore(dir, { writeMap: true });
  try {
    expect(s.room).toBeDefined();
    for (let round = 0; round < 5; round++) {
      fill(s, round * 5000, 5000);
      const st = statSync(derivedFile(dir));
      const end = dataEnd(s);
      // Allocated ahead of the data's end by at least the least room a write is given...
      fill(s, 1_000_000 + round, 1);
      const after = statSync(derivedFile(dir));
      expect(after.blocks * 512).toBeGreaterThanOrEqual(end + MIN_HEADROOM);
      // ...and far from the file's length: the map past the data is a hole.
      expect(st.size).toBeGreaterThanOrEqual(64 * MIB);
      expect(after.blocks * 512).toBeLessThan(st.size);
    }
  } finally {
    await closeStore(s);
  }
});

test("opened again, the file keeps its length: the map is never made shorter than it", async () => {
  const dir = tempDir("prealloc-length-");
  await closeStore(openStore(dir, { writeMap: true }));
  // As another process of the relay (a handover's predecessor) may have grown it meanwhile.
  truncateSync(derivedFile(dir), 200 * MIB);
  const s = openStore(dir, { writeMap: true });
  try {
    fill(s, 0, 100);
    expect(statSync(derivedFile(dir)).size).toBeGreaterThanOrEqual(200 * MIB);
  } finally {
    await closeStore(s);
  }
});

// A filesystem that can be filled: a small tmpfs (root only), as test/storage-full.test.ts.
const root = tempDir("prealloc-full-");
const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", root]).exitCode === 0;
if (!mounted)
  console.log("preallocate.test.ts: the full-disk case skipped, cannot mount a tmpfs here (needs root)");
afterAll(() => {
  if (mounted) Bun.spawnSync(["umount", "-l", root]);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!mounted)("on a full disk", () => {
  test("a write that cannot get its room fails with ENOSPC, writes nothing, and works once there is room", async () => {
    const dir = join(root, "data");
    mkdirSync(dir);
    const s = openStore(dir, { writeMap: true });
    try {
      fill(s, 0, 2000);
      const before = dataEnd(s);
      const free = statfsSync(root);
      const filler = join(root, "filler");
      writeFileSync(filler, Buffer.alloc(Math.max(0, free.bavail * free.bsize - 256 * 1024)));
      // Thousands of keys would take far more than the 256 KiB left: refused before LMDB
      // writes a page into a hole of the map (a SIGBUS, which would end this test's process).
      let error: { code?: unknown } | undefined;
      try {
        fill(s, 2000, 20_000);
      } catch (e) {
        error = e as { code?: unknown };
      }
      expect(error?.code).toBe("ENOSPC");
      expect(dataEnd(s)).toBe(before);
      rmSync(filler);
      fill(s, 2000, 20_000);
      expect(dataEnd(s)).toBeGreaterThan(before);
    } finally {
      await closeStore(s);
    }
  });
});
