// This relay and strfry in one sitting: the same load (bench/scale.ts, so bench/load's phases) run
// against each on a fresh data directory, alternating (ours, strfry, ours, strfry, …), then one
// table of the figures that compare them, each relay's runs and the ratio of their medians.
// strfry comes from ../shared/peers/ (its README: how to run it fairly); a ratio from one sitting
// holds, a figure from another day does not.
//
//   bun bench/side-by-side.ts --rounds 2 --events 50000 --phases ingest,query,count,live,mixed
//   bun bench/side-by-side.ts --rounds 1 --scale --phases ingest,query --cgroup-mem 1G
//   bun bench/side-by-side.ts --events 20000 --window 1 --phases ingest
//
// Own flags: --tree DIR (our checkout, default this one), --rounds N (2), --port P (ours on P,
// strfry on P+1; 7850), --out DIR (each run's JSON; default /tmp/side-by-side-<time>),
// --cgroup-mem SIZE (both in a memory cgroup of that size). Every other flag goes to
// bench/scale.ts for both relays (bench/run.ts's load flags); after `--`, flags for our relay.
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { E2EResult } from "./load/e2e.ts";
import type { MemReading } from "./load/rss.ts";
import { fmtRate, round, table } from "./load/stats.ts";

const ROOT = join(import.meta.dir, "..");

interface Args {
  tree: string;
  rounds: number;
  port: number;
  out: string;
  cgroup: string[];
  load: string[];
  ours: string[];
}

function parse(argv: string[]): Args {
  const dash = argv.indexOf("--");
  const mine = dash < 0 ? argv : argv.slice(0, dash);
  const a: Args = {
    tree: ROOT,
    rounds: 2,
    port: 7850,
    out: `/tmp/side-by-side-${Date.now()}`,
    cgroup: [],
    load: [],
    ours: dash < 0 ? [] : argv.slice(dash + 1),
  };
  for (let i = 0; i < mine.length; i++) {
    const arg = mine[i]!;
    const value = () => {
      const v = mine[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === "--tree") a.tree = resolve(value());
    else if (arg === "--rounds") a.rounds = Number(value());
    else if (arg === "--port") a.port = Number(value());
    else if (arg === "--out") a.out = resolve(value());
    else if (arg === "--cgroup-mem") a.cgroup = ["--cgroup-mem", value()];
    else a.load.push(arg);
  }
  if (!Number.isInteger(a.rounds) || a.rounds < 1) throw new Error("--rounds must be an integer ≥ 1");
  return a;
}

interface Run {
  relay: "ours" | "strfry";
  e2e?: E2EResult;
  row?: string[];
  outcome?: { text: string };
  figures?: { relayCpuUsPerEvent?: number; bytesPerEvent?: number };
}

async function runOne(a: Args, relay: Run["relay"], n: number): Promise<Run> {
  const json = join(a.out, `${relay}-${n}.json`);
  const who =
    relay === "ours"
      ? ["--tree", a.tree, "--port", String(a.port)]
      : ["--strfry", "--port", String(a.port + 1)];
  const cmd = [
    process.execPath,
    join(ROOT, "bench", "scale.ts"),
    ...who,
    ...a.cgroup,
    "--json",
    json,
    ...a.load,
    ...(relay === "ours" && a.ours.length > 0 ? ["--", ...a.ours] : []),
  ];
  console.error(`\n# ${relay}, run ${n}: ${cmd.slice(1).join(" ")}`);
  const p = Bun.spawn(cmd, { stdout: "inherit", stderr: "inherit" });
  await p.exited;
  try {
    return { relay, ...(JSON.parse(readFileSync(json, "utf8")) as Omit<Run, "relay">) };
  } catch {
    return { relay };
  }
}

/** CPU seconds of the relay between the phase mark before `mark` and `mark`. */
function phaseCpu(e: E2EResult, mark: string): number | undefined {
  const names = Object.keys(e.memory.marks);
  const i = names.indexOf(mark);
  if (i <= 0) return undefined;
  const b: MemReading | undefined = e.memory.marks[mark];
  const a: MemReading | undefined = e.memory.marks[names[i - 1]!];
  return a?.relayCpuS !== undefined && b?.relayCpuS !== undefined ? b.relayCpuS - a.relayCpuS : undefined;
}

type Figure = [name: string, of: (r: Run) => number | undefined, lowerIsBetter: boolean];

const perUnit = (cpu: number | undefined, n: number | undefined) =>
  cpu === undefined || !n ? undefined : Math.round((cpu / n) * 1e6);
const worst = (xs: number[] | undefined) => (xs && xs.length > 0 ? Math.max(...xs) : undefined);

const FIGURES: Figure[] = [
  ["ingest: accepted events/s (to the last OK)", (r) => r.e2e?.ingest?.acceptedPerSec, false],
  [
    "ingest: sustained events/s (first EVENT → nothing left to apply)",
    (r) => r.e2e?.sustained?.acceptedPerSec,
    false,
  ],
  ["ingest: relay CPU µs per accepted event", (r) => r.figures?.relayCpuUsPerEvent, true],
  ["ingest: OK p50 ms", (r) => r.e2e?.ingest?.okLatencyMs.p50, true],
  ["ingest: OK p99 ms", (r) => r.e2e?.ingest?.okLatencyMs.p99, true],
  ["ingest: peak RssAnon MB", (r) => r.e2e?.ingestMemory?.peak.rssAnonMB, true],
  ["ingest: peak VmRSS MB", (r) => r.e2e?.ingestMemory?.peak.vmRssMB, true],
  ["disk: bytes per event (du)", (r) => r.figures?.bytesPerEvent, true],
  ["query: REQ/s", (r) => r.e2e?.query?.reqPerSec, false],
  [
    "query: relay CPU µs per REQ",
    (r) => perUnit(r.e2e && phaseCpu(r.e2e, "after query"), r.e2e?.query?.completed),
    true,
  ],
  ["query: REQ p99 ms (all shapes)", (r) => r.e2e?.query?.eoseMs.p99, true],
  ["query: worst shape's REQ p50 ms", (r) => worst(r.e2e?.query?.byType.map((t) => t.eoseMs.p50)), true],
  ["query: worst shape's REQ p99 ms", (r) => worst(r.e2e?.query?.byType.map((t) => t.eoseMs.p99)), true],
  ["count: COUNT/s", (r) => r.e2e?.count?.countPerSec, false],
  [
    "count: relay CPU µs per COUNT",
    (r) => perUnit(r.e2e && phaseCpu(r.e2e, "after count"), r.e2e?.count?.completed),
    true,
  ],
  ["live: delivery p50 ms", (r) => r.e2e?.live?.deliveryMs.p50, true],
  ["live: delivery p99 ms", (r) => r.e2e?.live?.deliveryMs.p99, true],
  ["live: missed", (r) => r.e2e?.live?.missed, true],
  [
    "mixed: worst shape's REQ p99 ms",
    (r) => worst(r.e2e?.mixed?.query.byType.map((t) => t.eoseMs.p99)),
    true,
  ],
  ["mixed: REQ/s", (r) => r.e2e?.mixed?.query.reqPerSec, false],
  ["mixed: live delivery p99 ms", (r) => r.e2e?.mixed?.live.deliveryMs.p99, true],
  ["mixed: live missed", (r) => r.e2e?.mixed?.live.missed, true],
];

const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const show = (x: number): string => (Math.abs(x) >= 100 ? fmtRate(x) : String(round(x, 2)));

function report(runs: Run[]): string {
  const rows: string[][] = [];
  for (const [name, of] of FIGURES) {
    const ours = runs
      .filter((r) => r.relay === "ours")
      .map(of)
      .filter((x) => x !== undefined);
    const theirs = runs
      .filter((r) => r.relay === "strfry")
      .map(of)
      .filter((x) => x !== undefined);
    if (ours.length === 0 && theirs.length === 0) continue;
    const ratio =
      ours.length > 0 && theirs.length > 0 && median(theirs) !== 0
        ? `${round(median(ours) / median(theirs), 2)}×`
        : "";
    rows.push([name, ours.map(show).join(" · "), theirs.map(show).join(" · "), ratio]);
  }
  return table(["figure", "ours", "strfry", "ours ÷ strfry (medians)"], rows);
}

async function main(): Promise<number> {
  const a = parse(process.argv.slice(2));
  mkdirSync(a.out, { recursive: true });
  const runs: Run[] = [];
  for (let n = 1; n <= a.rounds; n++) {
    runs.push(await runOne(a, "ours", n));
    runs.push(await runOne(a, "strfry", n));
  }
  const failed = runs.filter((r) => r.outcome?.text !== "ok");
  console.log(`\n## Side by side: ${a.load.join(" ")}${a.cgroup.length ? ` ${a.cgroup.join(" ")}` : ""}\n`);
  console.log(report(runs));
  for (const r of failed) console.log(`\n${r.relay}: ${r.outcome?.text ?? "no result"}`);
  console.log(`\nEach run's JSON: ${a.out}`);
  return failed.length > 0 ? 1 : 0;
}

process.exit(
  await main().catch((e: Error) => {
    console.error(`side-by-side: ${e.message}`);
    return 2;
  }),
);
