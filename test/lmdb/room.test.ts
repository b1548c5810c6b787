// The derived environment written through a writable map (store.ts, room.ts): its file is as
// long as the map but takes disk only for its data; a write transaction the filesystem may not
// have room for does not start (ENOSPC) instead of taking the process down with a SIGBUS; and
// opening it again never cuts the file short.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, statfsSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closeStore, DERIVED_DIR, derivedWrite, openStore } from "../../src/store/store.ts";
import type { Store } from "../../src/store/types.ts";

const MIB = 2 ** 20;
const dirs: string[] = [];
const tempDir = (prefix: string): string => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
const derivedFile = (dir: string) => join(dir, DERIVED_DIR, "data.mdb");
const VALUE = 200;

/** The derived environment's data end: its last page in use, as LMDB reports it. */
const dataEnd = (s: Store): number => s.room!.dataEnd();

/** Writes `n` keys of VALUE bytes each in one derived transaction, said to add that much. */
function fill(s: Store, from: number, n: number): void {
  const db = s.derived.openDB({ name: "filler", keyEncoding: "binary", encoding: "binary" });
  derivedWrite(
    s,
    () => {
      for (let i = from; i < from + n; i++) {
        const k = Buffer.alloc(8);
        k.writeUInt32BE(Math.imul(i, 2654435761) >>> 0, 0);
        k.writeUInt32BE(i, 4);
        db.put(k, Buffer.alloc(VALUE, i & 0xff));
      }
    },
    n * VALUE,
  );
}

test("the file is as long as its map and takes disk for its data only", async () => {
  const dir = tempDir("room-");
  const s = openStore(dir, { writeMap: true });
  try {
    expect(s.room).toBeDefined();
    for (let round = 0; round < 4; round++) {
      fill(s, round * 5000, 5000);
      const st = statSync(derivedFile(dir));
      expect(st.size).toBeGreaterThanOrEqual(64 * MIB);
      expect(st.blocks * 512).toBeGreaterThanOrEqual(dataEnd(s));
      expect(st.blocks * 512).toBeLessThan(dataEnd(s) + MIB);
    }
  } finally {
    await closeStore(s);
  }
});

test("opened again, the file keeps its length: the map is never made shorter than it", async () => {
  const dir = tempDir("room-length-");
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
const root = tempDir("room-full-");
const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", root]).exitCode === 0;
if (!mounted) console.log("room.test.ts: the full-disk case skipped, cannot mount a tmpfs here (needs root)");
afterAll(() => {
  if (mounted) Bun.spawnSync(["umount", "-l", root]);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!mounted)("on a nearly full disk", () => {
  test("a write that may not have room does not start (ENOSPC), writes nothing, and goes once there is", async () => {
    const dir = join(root, "data");
    mkdirSync(dir);
    const s = openStore(dir, { writeMap: true });
    try {
      fill(s, 0, 2000);
      const before = dataEnd(s);
      const free = statfsSync(root);
      const filler = join(root, "filler");
      // Room for a small transaction, not for one ten times as large: what LMDB would write into
      // the holes of the map past the data had no blocks to take (a SIGBUS, which would end
      // this test's process).
      const small = s.room!.needed(2000 * VALUE);
      writeFileSync(filler, Buffer.alloc(Math.max(0, free.bavail * free.bsize - small - MIB)));
      fill(s, 2000, 2000);
      let error: { code?: unknown } | undefined;
      const end = dataEnd(s);
      try {
        fill(s, 4000, 20_000);
      } catch (e) {
        error = e as { code?: unknown };
      }
      expect(error?.code).toBe("ENOSPC");
      expect(dataEnd(s)).toBe(end);
      expect(end).toBeGreaterThan(before);
      rmSync(filler);
      fill(s, 4000, 20_000);
      expect(dataEnd(s)).toBeGreaterThan(end + 20_000 * VALUE);
    } finally {
      await closeStore(s);
    }
  });
});
