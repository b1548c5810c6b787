// Verification throughput on the same 1,000 signed events: in-thread noble (baseline), in-thread
// libsecp256k1, and the worker pool. Run: bun bench/verify.bench.ts (VERIFY_THREADS=n to override).
import { bench, do_not_optimize, run, summary } from "mitata";
import { loadNativeBackend } from "../src/verify/native.ts";
import { VerifyPool } from "../src/verify/pool.ts";
import { nobleBackend, verifyEvent } from "../src/verify/verify.ts";
import { signedEvents } from "../test/fixtures/signed-events.ts";

const N = 1000;
const events = signedEvents(N);
const native = loadNativeBackend();
const threads = process.env.VERIFY_THREADS ? Number(process.env.VERIFY_THREADS) : undefined;
const pools = [
  ...(native ? [new VerifyPool({ threads, backend: "native" })] : []),
  new VerifyPool({ threads, backend: "noble" }),
];
for (const p of pools) console.log(p.reason);
if (!native) console.log("libsecp256k1 not found: native cases skipped");

// Every case must accept every event, or the numbers would be measuring a failure path.
const all = (rs: readonly string[]) => {
  if (rs.some((r) => r !== "ok")) throw new Error("an event failed verification");
  do_not_optimize(rs);
};
for (const p of pools) all(await p.verifyMany(events)); // also warms the workers

summary(() => {
  bench(`noble in-thread x${N}`, () => all(events.map((e) => verifyEvent(e, nobleBackend)))).baseline();
  if (native) bench(`libsecp256k1 in-thread x${N}`, () => all(events.map((e) => verifyEvent(e, native))));
  for (const p of pools) {
    const name = `${p.backend.name} pool (${p.threads} thread${p.threads === 1 ? "" : "s"}) x${N}`;
    bench(name, async () => all(await p.verifyMany(events)));
  }
});

const { benchmarks } = await run({ colors: process.stdout.isTTY === true });
console.log("\nverifies/s (mean time per 1,000 events):");
for (const trial of benchmarks) {
  for (const r of trial.runs) {
    if (!r.stats) continue;
    const perSec = N / (r.stats.avg / 1e9);
    console.log(`  ${r.name.padEnd(40)} ${Math.round(perSec).toLocaleString("en-US").padStart(10)} /s`);
  }
}
await Promise.all(pools.map((p) => p.close()));
