// What the consumers of the log cost an event, alone: a copy of a kept store's log (no derived
// environment: every consumer starts empty, as on a fresh ingest) applied in generations of
// --batch events through the relay's in-thread applier, the events in serial order. Prints the
// process's CPU (user + system, which includes lmdb-js's write thread) and wall time per event,
// the applier's steps and the anonymous memory it peaked at. Runs from any tree of the relay
// (`--tree`), so two commits compare on the same log; alternate them, the machine is noisy.
//
//   bun bench/consumers.ts --data /tmp/relay-bench-7950-XXXXXX [--tree /tmp/ab/base]
//     [--events 100000] [--batch 10000] [--skip 0] [--consumers indexes,search,counters,hll]
//     [--write-map] (derived/ through a writable map, as the relay writes it; prints its disk)
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values: a } = parseArgs({
  options: {
    data: { type: "string" },
    tree: { type: "string", default: join(import.meta.dir, "..") },
    events: { type: "string", default: "100000" },
    batch: { type: "string", default: "10000" },
    skip: { type: "string", default: "0" },
    consumers: { type: "string", default: "indexes,search,counters,hll" },
    "write-map": { type: "boolean", default: false },
  },
});
if (!a.data) throw new Error("--data DIR (a kept data directory) is required");
const tree = resolve(a.tree!);
const total = Number(a.events);
const batch = Number(a.batch);
const skip = Number(a.skip);

// The log alone, copied: data.mdb and its lock; derived/ is left behind.
const dir = mkdtempSync("/tmp/bench-consumers-");
cpSync(join(a.data, "data.mdb"), join(dir, "data.mdb"));

const { openStore, closeStore } = await import(join(tree, "src/store/store.ts"));
const { consumersByName } = await import(join(tree, "src/consumers/registry.ts"));
const { InThreadApplier } = await import(join(tree, "src/consumers/apply.ts"));
const { readU64, serialKey } = await import(join(tree, "src/store/keys.ts"));

const s = openStore(dir, { writeMap: a["write-map"] });
const consumers = consumersByName(s, a.consumers!.split(","));
const applier = new InThreadApplier(s, consumers);

const serials: number[] = [];
for (const k of s.events.getKeys({ start: serialKey(1) })) {
  serials.push(readU64(k as Buffer, 0));
  if (serials.length >= skip + total) break;
}
serials.splice(0, skip);

const anonMb = (): number => {
  const m = /^RssAnon:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
  return m ? Number(m[1]) / 1024 : 0;
};

// The base of a tree from before the consumers' batches took each event as it was read: its
// applier took each consumer's share of a generation, prepared from the events up front.
const share = (g: { adds: Float64Array }) => (i: number) => {
  const c = consumers[i];
  return {
    adds: Array.from(g.adds, (serial) => ({
      serial,
      p: c.prepare(JSON.parse(s.eventsText.get(serialKey(serial)))),
    })),
    removes: [],
  };
};

const derivedFile = join(dir, "derived", "data.mdb");
const dataEnd = (): number => {
  const env = (s.derived as { env: { info(): { lastPageNumber: number } } }).env;
  return (env.info().lastPageNumber + 1) * 4096;
};
let grew = 0;
let peak = anonMb();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let at = 0, n = 1; at < serials.length; at += batch, n++) {
  const adds = Float64Array.from(serials.slice(at, at + batch));
  const g = {
    n,
    maxSerial: adds[adds.length - 1]!,
    maxSeq: s.lastRemoval,
    adds,
    removes: new Float64Array(0),
    // what the derived room check takes a generation to add (the runner counts the JSON)
    bytes: adds.length * 2048,
  };
  const before = dataEnd();
  await (applier.apply.length > 1 ? applier.apply(g, share(g)) : applier.apply(g));
  grew = Math.max(grew, dataEnd() - before);
  peak = Math.max(peak, anonMb());
}
const wall = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const us = (cpu.user + cpu.system) / serials.length;
console.log(
  `${tree}: ${serials.length} events from serial ${serials[0]} in batches of ${batch}: ` +
    `${us.toFixed(1)} µs CPU an event (user ${(cpu.user / serials.length).toFixed(1)}), ` +
    `${((wall * 1000) / serials.length).toFixed(1)} µs wall, peak RssAnon ${peak.toFixed(0)} MB`,
);
const st = statSync(derivedFile);
const mb = (n: number) => `${(n / 2 ** 20).toFixed(1)} MB`;
console.log(
  `derived/data.mdb: data ${mb(dataEnd())}, length ${mb(st.size)}, on disk ${mb(st.blocks * 512)}; ` +
    `a batch grew the data by ${mb(grew)} at most`,
);
await closeStore(s);
rmSync(dir, { recursive: true, force: true });
