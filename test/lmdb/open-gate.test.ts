// A process that opens the store while another commits to it (a data command beside the relay,
// a successor taking over from a relay that still writes) loses none of its commits
// (open-gate.ts). Real processes on one real LMDB directory.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OPEN_LOCK_FILE } from "../../src/lmdb/open-gate.ts";
import type { NostrEvent } from "../../src/nostr/event.ts";
import { hexBytes } from "../../src/store/keys.ts";
import { closeStore, openStore } from "../../src/store/store.ts";
import { Writer } from "../../src/store/writer.ts";
import { unsignedNote } from "../fixtures/stored-events.ts";

const ev = (n: number): [NostrEvent, string] => unsignedNote(n, "x".repeat(200));

test("every commit answered stored survives another process opening and closing the store meanwhile", async () => {
  const dir = mkdtempSync(join(tmpdir(), "open-gate-"));
  const script = join(dir, "open-loop.ts");
  writeFileSync(
    script,
    `import { closeStore, openStore } from ${JSON.stringify(join(import.meta.dir, "..", "..", "src", "store", "store.ts"))};
     let n = 0;
     for (;;) {
       const s = openStore(${JSON.stringify(dir)});
       await closeStore(s);
       if (++n === 1) console.log("opening");
     }`,
  );
  const s = openStore(dir);
  const opener = Bun.spawn([process.execPath, script], { stdout: "pipe", stderr: "inherit" });
  try {
    const reader = opener.stdout.getReader();
    // Its first opening is done: the loop runs. A child that cannot start ends its output instead,
    // and the test must not go on to pass without the openings it is about.
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain("opening");
    const w = new Writer(s, 64, () => {});
    const stored: string[] = [];
    // One transaction each, answered one after another, while the other process opens the
    // store again and again (before the lock, ~1 commit in 300 here was lost).
    for (let n = 1; n <= 1500; n++) {
      const [e, json] = ev(n);
      const o = await w.submit(e, json);
      expect(o.status).toBe("stored");
      stored.push(e.id);
    }
    await w.drain();
    opener.kill("SIGKILL");
    await opener.exited;
    s.env.resetReadTxn();
    expect(stored.filter((id) => s.ids.getBinaryFast(hexBytes(id)) === undefined)).toEqual([]);
  } finally {
    opener.kill("SIGKILL");
    await closeStore(s);
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

test.skipIf(process.platform !== "linux")(
  "an opening that never ends costs the writes one wait, not one each, and nothing is refused",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "open-gate-stuck-"));
    const s = openStore(dir);
    // Another process holds the lock exclusively and never lets go (an opening stopped half way).
    const script = join(dir, "hold.ts");
    writeFileSync(
      script,
      `import { dlopen, FFIType } from "bun:ffi";
     import { openSync } from "node:fs";
     const { symbols } = dlopen("libc.so.6", { flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } });
     if (symbols.flock(openSync(${JSON.stringify(join(dir, OPEN_LOCK_FILE))}, "a"), 2) !== 0) process.exit(1);
     console.log("held");
     setInterval(() => {}, 1000);`,
    );
    const holder = Bun.spawn([process.execPath, script], { stdout: "pipe", stderr: "inherit" });
    try {
      await holder.stdout.getReader().read();
      const w = new Writer(s, 64, () => {});
      for (let n = 1; n <= 5; n++) expect((await w.submit(...ev(n))).status).toBe("stored");
      expect(s.gate.waitsRunOut).toBe(1);
    } finally {
      holder.kill("SIGKILL");
      await holder.exited;
      await closeStore(s);
      rmSync(dir, { recursive: true, force: true });
    }
  },
  30_000,
);
