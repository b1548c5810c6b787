// Flags of bench/scale.ts: its own (which tree, port, cgroup, what to keep), then any flag of
// bench/run.ts for the load (events, authors, phases, rest, …), then after `--` the relay's own.
import type { BenchArgs } from "../load/args.ts";
import { parseBenchArgs } from "../load/args.ts";

export interface ScaleArgs {
  /** the relay's checkout; undefined with --strfry */
  tree: string | undefined;
  /** run strfry from ../shared/peers/ instead of this relay (the relay flags become its --set pairs) */
  strfry: boolean;
  port: number;
  /** memory limit in bytes for the relay's cgroup; undefined: no cgroup */
  cgroupMem: number | undefined;
  keep: boolean;
  json: string;
  label: string | undefined;
  /** seconds to wait for the relay's start-up line */
  startTimeoutS: number;
  /** flags passed to `bun src/main.ts` after --port and --data */
  relayFlags: string[];
  /** the load, as bench/run.ts would run it against the relay (url and pid filled in later) */
  benchArgv: string[];
  bench: BenchArgs;
}

export const SCALE_USAGE = `usage: bun bench/scale.ts (--tree DIR | --strfry) --port P [options] [bench/run.ts options] [-- relay flags]
  --tree DIR          the relay's checkout (this repo at any commit, e.g. a git worktree); the relay
                      runs as \`bun src/main.ts --port P --data D\` from there, on a fresh D in /tmp
  --strfry            run strfry instead, from ../shared/peers/ (or $STRFRY_PEERS) through its
                      start-strfry.sh, on a fresh database in /tmp, permessage-deflate off; the
                      relay flags after -- are its settings (-- relay.numThreads.reqWorker=3)
  --port P            the relay's port (also names its cgroup, relay-bench-P)
  --cgroup-mem SIZE   run the relay in a memory cgroup limited to SIZE (e.g. 1G, 768M, 256M)
  --keep              keep the data directory (default: removed after the run)
  --json FILE         where the results go (default scale-P.json)
  --label TEXT        names the run in the table row (default: the tree's directory and commit)
  --start-timeout S   seconds to wait for "relay listening on" (default 60)
  bench/run.ts options (--events, --authors, --scale, --phases, --rest, --stall, --connections…);
  here --phases defaults to ingest and --rest to 10
  -- FLAGS…           passed to the relay, e.g. -- --consumers.maxBatch 5000`;

const OWN = new Set(["tree", "port", "cgroup-mem", "json", "label", "start-timeout"]);
const OWN_BOOL = new Set(["keep", "strfry"]);

/** "1G", "768M", "1.5GiB", "268435456" → bytes (binary units). */
export function parseSize(s: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?$/i.exec(s.trim());
  if (!m) throw new Error(`--cgroup-mem ${s} is not a size like 1G or 512M`);
  const unit = { "": 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40 }[m[2]!.toUpperCase() as "K"]!;
  return Math.round(Number(m[1]) * unit);
}

export function parseScaleArgs(argv: string[]): ScaleArgs | "help" {
  const dash = argv.indexOf("--");
  const mine = dash < 0 ? argv : argv.slice(0, dash);
  const relayFlags = dash < 0 ? [] : argv.slice(dash + 1);
  const own: Record<string, string> = {};
  const flags = new Set<string>();
  const benchArgv: string[] = [];
  for (let i = 0; i < mine.length; i++) {
    const arg = mine[i]!;
    if (arg === "--help" || arg === "-h") return "help";
    const [name, inline] = arg.startsWith("--") ? arg.slice(2).split(/=(.*)/s) : [undefined, undefined];
    if (name !== undefined && OWN.has(name)) {
      const v = inline ?? mine[++i];
      if (v === undefined) throw new Error(`--${name} needs a value`);
      own[name] = v;
    } else if (name !== undefined && OWN_BOOL.has(name)) flags.add(name);
    else benchArgv.push(arg);
  }
  const strfry = flags.has("strfry");
  if (!own.tree && !strfry) throw new Error("--tree DIR (or --strfry) is required");
  if (own.tree && strfry) throw new Error("--tree and --strfry name two relays: give one");
  const port = Number(own.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error("--port P is required (1-65535)");
  const has = (f: string) => benchArgv.some((a) => a === `--${f}` || a.startsWith(`--${f}=`));
  // A scale run is about the ingest and what it leaves in memory: those defaults, unless given.
  if (!has("phases")) benchArgv.push("--phases", "ingest");
  if (!has("rest")) benchArgv.push("--rest", "10");
  for (const f of ["url", "pid", "json"])
    if (has(f)) throw new Error(`--${f} is set by bench/scale.ts itself (its --json is the run's)`);
  const url = `ws://127.0.0.1:${port}`;
  const bench = parseBenchArgs([...benchArgv, "--url", url, "--pid", "1"]);
  if (bench === "help") return "help";
  return {
    tree: own.tree,
    strfry,
    port,
    cgroupMem: own["cgroup-mem"] === undefined ? undefined : parseSize(own["cgroup-mem"]),
    keep: flags.has("keep"),
    json: own.json ?? `scale-${port}.json`,
    label: own.label,
    startTimeoutS: Number(own["start-timeout"] ?? 60),
    relayFlags,
    benchArgv,
    bench,
  };
}
