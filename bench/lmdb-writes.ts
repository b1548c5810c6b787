// Where an LMDB put's cost lands: inside a transaction callback every put runs on the main
// thread; as lmdb-js asynchronous writes the main thread only encodes them and lmdb-js's write
// thread does the rest. Also checks the ordering the writer relies on: a transaction callback
// sees every asynchronous put issued before it. `bun bench/lmdb-writes.ts`
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";

const EVENTS = 500;
const PER_EVENT = 60;
const BATCHES = 20;
const EMPTY = Buffer.alloc(0);
const total = EVENTS * PER_EVENT * BATCHES;
const keys: Buffer[] = [];
for (let i = 0; i < total; i++) keys.push(Buffer.from(crypto.getRandomValues(new Uint8Array(48))));

function env() {
  const dir = mkdtempSync(join(tmpdir(), "lmdb-writes-"));
  const root = open({ path: dir, maxDbs: 16, compression: false, noSubdir: false });
  const dbs = Array.from({ length: 8 }, (_, i) =>
    root.openDB({ name: `d${i}`, keyEncoding: "binary", encoding: "binary" }),
  );
  return { dir, root, dbs };
}

async function run(mode: "in transaction" | "asynchronous"): Promise<void> {
  const { dir, root, dbs } = env();
  const started = performance.now();
  let mainMs = 0;
  let k = 0;
  for (let b = 0; b < BATCHES; b++) {
    if (mode === "in transaction") {
      await root.transaction(() => {
        const t = performance.now();
        for (let i = 0; i < EVENTS * PER_EVENT; i++) dbs[i & 7]!.put(keys[k++]!, EMPTY);
        mainMs += performance.now() - t;
      });
    } else {
      const t = performance.now();
      let last: Promise<unknown> = Promise.resolve();
      for (let i = 0; i < EVENTS * PER_EVENT; i++) last = dbs[i & 7]!.put(keys[k++]!, EMPTY);
      mainMs += performance.now() - t;
      await last;
    }
  }
  const wall = performance.now() - started;
  console.log(
    `${mode.padEnd(15)} ${((wall * 1000) / total).toFixed(2)} µs/put wall, ${((mainMs * 1000) / total).toFixed(2)} µs/put on the main thread`,
  );
  await root.close();
  rmSync(dir, { recursive: true, force: true });
}

async function ordering(): Promise<void> {
  const { dir, root, dbs } = env();
  let misses = 0;
  const done: Promise<unknown>[] = [];
  for (let r = 0; r < 200; r++) {
    const k = Buffer.from(`key-${r}`);
    for (let j = 0; j < 300; j++) dbs[1]!.put(Buffer.from(`fill-${r}-${j}`), EMPTY);
    dbs[0]!.put(k, Buffer.from("v"));
    done.push(
      root.transaction(() => {
        if (dbs[0]!.get(k) === undefined) misses++;
      }),
    );
    if (r % 10 === 0) await Bun.sleep(0);
  }
  await Promise.all(done);
  console.log(`ordering: ${misses} of 200 transaction callbacks missed an earlier asynchronous put`);
  await root.close();
  rmSync(dir, { recursive: true, force: true });
}

for (const mode of ["in transaction", "asynchronous", "in transaction", "asynchronous"] as const)
  await run(mode);
await ordering();
