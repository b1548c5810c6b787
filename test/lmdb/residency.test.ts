import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { releasePages } from "../../src/lmdb/residency.ts";
import { closeStore, openStore } from "../../src/store/store.ts";

const dir = mkdtempSync(join(tmpdir(), "residency-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Resident KiB of this process's mappings of `file`, from /proc/self/smaps. */
function residentKb(file: string): number {
  let kb = 0;
  let inFile = false;
  for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inFile = line.endsWith(` ${file}`) || line.endsWith(`\t${file}`);
    else if (inFile && line.startsWith("Rss:")) kb += Number(line.split(/\s+/)[1]);
  }
  return kb;
}

test.skipIf(process.platform !== "linux")("released pages leave the process and read back intact", () => {
  const s = openStore(dir, { mapSizeGb: 1 });
  const value = Buffer.alloc(2000, 7);
  s.env.transactionSync(() => {
    for (let i = 0; i < 5000; i++) s.events.put(Buffer.from(i.toString().padStart(8, "0")), value);
  });
  // Read everything through the map so its pages are resident.
  let sum = 0;
  for (const { value: v } of s.events.getRange({})) sum += (v as Buffer).length;
  expect(sum).toBe(5000 * 2000);
  const file = realpathSync(join(dir, "data.mdb"));
  expect(residentKb(file)).toBeGreaterThan(5000);

  expect(releasePages([dir])).toBe(1);
  expect(residentKb(file)).toBe(0);

  // Nothing was lost: the pages come back from the page cache.
  let again = 0;
  for (const { value: v } of s.events.getRange({})) again += (v as Buffer).equals(value) ? 1 : 0;
  expect(again).toBe(5000);
  void closeStore(s);
});
