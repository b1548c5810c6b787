// One scale run of one relay tree, start to finish: a fresh data directory in /tmp, optionally a
// memory cgroup with a limit (bench/scale/cgroup-setup.ts), the relay started from the tree and
// awaited, the load tool's phases against it (bench/load, as bench/run.ts --url --pid runs
// them), then what it left: disk use per stored event, whether it was OOM-killed, how it exited.
// The relay is stopped with SIGINT, the cgroup removed, the data directory too unless --keep.
// Prints the load tool's tables and one markdown row (paste rows of several runs under one
// header to compare trees), and writes everything to --json.
//
//   bun bench/scale.ts --tree /work/main --port 7950 --scale --cgroup-mem 1G
//   bun bench/scale.ts --strfry --port 7951 --scale --cgroup-mem 1G
//   bun bench/scale.ts --tree /tmp/ab/base --port 7951 --events 1000000 --authors 20000 \
//     --rest 30 -- --consumers.maxBatch 5000
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { Cgroup, CgroupOom } from "./load/cgroup.ts";
import { oomOf, readCgroup } from "./load/cgroup.ts";
import type { E2EResult } from "./load/e2e.ts";
import { runE2E } from "./load/e2e.ts";
import { e2eTables, machine } from "./load/report.ts";
import type { ScaleArgs } from "./scale/args.ts";
import { parseScaleArgs, SCALE_USAGE } from "./scale/args.ts";
import { inCgroup, makeCgroup, removeCgroup } from "./scale/cgroup-setup.ts";
import { diskUse } from "./scale/disk.ts";
import type { Relay } from "./scale/relay-process.ts";
import { startRelay } from "./scale/relay-process.ts";
import { startStrfry, strfryDir } from "./scale/strfry-process.ts";
import { figures, markdownRows, outcome, row } from "./scale/summary.ts";

const ROOT = join(import.meta.dir, "..");
const log = (s: string) => console.error(s);

function commitOf(tree: string): string {
  const r = Bun.spawnSync(["git", "-C", tree, "rev-parse", "--short", "HEAD"], { stderr: "ignore" });
  if (r.exitCode !== 0) return "unknown";
  const dirty = Bun.spawnSync(["git", "-C", tree, "status", "--porcelain", "--untracked-files=no", "src"], {
    stderr: "ignore",
  });
  return `${r.stdout.toString().trim()}${dirty.stdout.toString().trim() ? "+changes" : ""}`;
}

async function run(a: ScaleArgs): Promise<number> {
  const peers = a.strfry ? strfryDir(ROOT) : undefined;
  if (a.strfry && !peers)
    throw new Error("no strfry: ../shared/peers/ (or $STRFRY_PEERS) has no strfry and start-strfry.sh");
  const tree = a.tree === undefined ? undefined : resolve(a.tree);
  if (tree && !existsSync(join(tree, "src", "main.ts"))) throw new Error(`${tree} has no src/main.ts`);
  const commit = tree ? commitOf(tree) : "strfry";
  const label =
    a.label ??
    `${tree ? `${basename(tree)}@${commit}` : "strfry"}${a.cgroupMem ? ` in ${a.cgroupMem / 2 ** 20} MiB` : ""}`;
  const cg: Cgroup | undefined = a.cgroupMem === undefined ? undefined : makeCgroup(a.port, a.cgroupMem);
  if (cg) log(`cgroup v${cg.version} ${cg.dir}, limit ${cg.limitBytes} bytes`);
  // A temp directory with a dot-free name (see docs/performance/2026-11.md, "Relay bugs found").
  const data = mkdtempSync(`/tmp/relay-bench-${a.port}-`);
  const logFile = `${data}.log`;
  const cmd = tree
    ? [process.execPath, "src/main.ts", "--port", String(a.port), "--data", data, ...a.relayFlags]
    : [join(peers!, "start-strfry.sh"), String(a.port), data];
  let relay: Relay | undefined;
  let e2e: E2EResult | undefined;
  let error: string | undefined;
  // Ctrl-C on the driver still stops the relay and removes the cgroup.
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
    log("interrupted: stopping the relay");
    void relay?.stop(10_000).finally(async () => {
      if (cg) await removeCgroup(cg);
      process.exit(130);
    });
  };
  process.on("SIGINT", onSigint);
  try {
    relay = tree
      ? await startRelay({
          cmd: cg ? inCgroup(cg.dir, cmd) : cmd,
          cwd: tree,
          logFile,
          timeoutMs: a.startTimeoutS * 1000,
        })
      : await startStrfry({
          peers: peers!,
          port: a.port,
          db: data,
          runDir: `${data}.run`,
          logFile,
          timeoutMs: a.startTimeoutS * 1000,
          sets: a.relayFlags,
          ...(cg ? { wrap: (c: string[]) => inCgroup(cg.dir, c) } : {}),
        });
    log(`relay pid ${relay.pid} from ${tree ?? peers} (${commit}): ${relay.startLine}`);
    try {
      e2e = await runE2E(relay.url, { ...a.bench, url: relay.url, pid: relay.pid }, ROOT, log, relay.pid);
      error = e2e.error;
    } catch (err) {
      error = (err as Error).message;
      log(`load run failed: ${error}`);
    }
  } catch (err) {
    error = (err as Error).message;
    log(error);
  }
  if (interrupted) return 130;
  const exit = relay ? await relay.stop() : { code: null, signal: null, beforeStop: true, killed: false };
  // Read after the relay is gone: the OOM counters and the kernel's peak are the whole run's.
  const oom: CgroupOom | undefined = cg ? oomOf(cg) : undefined;
  const cgPeakMB = cg ? readCgroup(cg)?.peakMB : undefined;
  const disk = diskUse(data);
  const cgroupRemoved = cg ? await removeCgroup(cg) : undefined;
  if (!a.keep) rmSync(data, { recursive: true, force: true });
  if (!tree) rmSync(`${data}.run`, { recursive: true, force: true });
  process.off("SIGINT", onSigint);

  const f = e2e ? figures(e2e, disk) : {};
  const o = outcome(e2e, exit, oom?.oomKills);
  if (error && o.text === "ok") o.text = `error: ${error}`;
  const r = row(label, e2e, disk, f, o, cgPeakMB);
  if (e2e) console.log(`\n## ${label}\n\n${e2eTables(e2e)}`);
  console.log(`\n### Scale run\n`);
  console.log(
    `relay ${exit.beforeStop ? `had exited (${exit.signal ?? `code ${exit.code}`}) before the stop` : `stopped with SIGINT${exit.killed ? ", then SIGKILL" : ""}: ${exit.signal ?? `code ${exit.code}`}`}` +
      (cg
        ? `; cgroup v${cg.version} peak ${cgPeakMB === undefined ? "?" : Math.round(cgPeakMB)} MB, oom_kill ${oom?.oomKills ?? "?"}` +
          `${oom?.failcnt !== undefined ? `, failcnt ${oom.failcnt}` : ""}`
        : "") +
      `; data ${disk.dataBytes ?? "?"} bytes (derived ${disk.derivedBytes ?? "?"}), allocated ${disk.dataAllocatedBytes ?? "?"}` +
      `${a.keep ? `, kept in ${data}` : ""}; relay log ${logFile}\n`,
  );
  console.log(markdownRows([r]));
  const out = {
    machine: machine(),
    label,
    tree,
    commit,
    port: a.port,
    relayCommand: cmd,
    relayFlags: a.relayFlags,
    relayStartLine: relay?.startLine,
    relayLog: logFile,
    dataDir: a.keep ? data : undefined,
    benchArgv: a.benchArgv,
    cgroup: cg && { ...cg, peakMB: cgPeakMB, ...oom, removed: cgroupRemoved },
    exit,
    outcome: o,
    error,
    disk,
    figures: f,
    row: r,
    e2e,
  };
  await Bun.write(a.json, `${JSON.stringify(out, null, 2)}\n`);
  log(`results written to ${a.json}`);
  return e2e ? 0 : 1;
}

let args: ScaleArgs | "help";
try {
  args = parseScaleArgs(process.argv.slice(2));
} catch (e) {
  console.error(`${(e as Error).message}\n\n${SCALE_USAGE}`);
  process.exit(2);
}
if (args === "help") {
  console.log(SCALE_USAGE);
  process.exit(0);
}
// Explicit exit, as bench/run.ts: a socket left half-closed must not keep the driver alive.
process.exit(
  await run(args).catch((e: Error) => {
    console.error(`scale: ${e.message}`);
    return 1;
  }),
);
