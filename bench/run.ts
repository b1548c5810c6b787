// Benchmark entry point (`npm run bench`): micro-benchmarks, then an end-to-end load run against an
// in-process relay on a temp dir; or, with --url, the load run alone against any relay.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config/load.ts";
import { startRelay } from "../src/relay.ts";
import type { BenchArgs } from "./load/args.ts";
import { parseBenchArgs, USAGE } from "./load/args.ts";
import type { E2EResult } from "./load/e2e.ts";
import { runE2E } from "./load/e2e.ts";
import { e2eTables, machine } from "./load/report.ts";
import type { MicroGroup } from "./micro/suite.ts";
import { microTable, runMicro } from "./micro/suite.ts";

const ROOT = join(import.meta.dir, "..");
const log = (s: string) => console.error(s);

async function inProcess(a: BenchArgs): Promise<E2EResult> {
  const dir = mkdtempSync(join(tmpdir(), "bench-relay-"));
  const relay = startRelay(loadConfig({ flags: { port: "0", data: dir } }));
  log(
    `in-process relay at ${relay.url}, data in ${dir} (shares this process and its CPU with the load tool)`,
  );
  try {
    return await runE2E(relay.url, a, ROOT, log, undefined);
  } finally {
    await relay.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  let a: BenchArgs | "help";
  try {
    a = parseBenchArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (a === "help") {
    console.log(USAGE);
    return 0;
  }
  const out: { machine: ReturnType<typeof machine>; args: unknown; micro?: MicroGroup[]; e2e?: E2EResult } = {
    machine: machine(),
    args: { ...a, filter: a.filter?.source },
  };
  if (a.micro) {
    out.micro = await runMicro(a.filter);
    console.log(`\n## Micro-benchmarks (ratios within a group)\n\n${microTable(out.micro)}`);
  }
  if (a.e2e) {
    out.e2e = a.url ? await runE2E(a.url, a, ROOT, log, a.pid) : await inProcess(a);
    console.log(`\n## End-to-end\n\n${e2eTables(out.e2e)}`);
  }
  if (a.json) {
    await Bun.write(a.json, `${JSON.stringify(out, null, 2)}\n`);
    log(`results written to ${a.json}`);
  }
  return out.e2e?.error ? 1 : 0;
}

// Explicit exit: a relay or socket left half-closed by a timed-out phase must not hang the run.
process.exit(
  await main().catch((e: Error) => {
    console.error(`bench: ${e.message}`);
    return 1;
  }),
);
