// strfry, the peer we measure against, as the relay under test: started by the
// `start-strfry.sh PORT DBDIR` that ships beside its binary in ../shared/peers/ (it writes the
// config, detaches strfry, waits for NIP-11 and prints the PID last), with permessage-deflate
// off (ours has none either), a created_at window that takes the datasets, and its log at
// warnings. Stopped with SIGTERM and, if that does not
// end it in time, SIGKILL. It is not our child (the script detaches it), so its end is seen in
// /proc, not through an exit status.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Relay, RelayExit } from "./relay-process.ts";

/** Where strfry and its start script are, from this checkout: ../shared/peers/ beside the repo. */
export function strfryDir(root: string): string | undefined {
  for (const dir of [process.env.STRFRY_PEERS, join(root, "..", "shared", "peers")])
    if (dir && existsSync(join(dir, "start-strfry.sh")) && existsSync(join(dir, "strfry"))) return dir;
  return undefined;
}

/** Whether pid is gone (or a zombie no one has reaped yet). */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return true;
  }
}

/**
 * Starts strfry on 127.0.0.1:`port` with its database in `db`; `wrap` puts the start script in
 * a cgroup (strfry inherits it). Extra `--set key=value` pairs go through STRFRY_ARGS.
 */
export async function startStrfry(o: {
  peers: string;
  port: number;
  db: string;
  runDir: string;
  logFile: string;
  timeoutMs: number;
  sets?: string[];
  wrap?: (cmd: string[]) => string[];
}): Promise<Relay> {
  const args = [
    "--set relay.compression.enabled=false",
    // The bench datasets are fixed in time (created_at from 2023-11-14 on, so that a seed always
    // gives the same bytes): past strfry's default window of three years they would be refused.
    "--set events.rejectEventsOlderThanSeconds=1000000000",
    ...(o.sets ?? []).map((s) => `--set ${s}`),
  ];
  const cmd = [join(o.peers, "start-strfry.sh"), String(o.port), o.db];
  const proc = Bun.spawn(o.wrap ? o.wrap(cmd) : cmd, {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: {
      ...process.env,
      STRFRY_RUN_DIR: o.runDir,
      STRFRY_VERBOSITY: "warn",
      STRFRY_ARGS: args.join(" "),
      STRFRY_START_TIMEOUT: String(Math.ceil(o.timeoutMs / 1000)),
    },
  });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  const lines = out.trim().split("\n");
  const pid = Number(lines.at(-1));
  if (proc.exitCode !== 0 || !Number.isInteger(pid))
    throw new Error(`start-strfry.sh failed (exit ${proc.exitCode}): ${err.trim() || out.trim()}`);
  const strfryLog = join(o.runDir, `strfry-${o.port}.log`);
  const startLine = lines.at(-2) ?? `strfry pid ${pid}`;
  return {
    pid,
    url: `ws://127.0.0.1:${o.port}`,
    startLine,
    exited: () => gone(pid),
    async stop(graceMs = 60_000): Promise<RelayExit> {
      const beforeStop = gone(pid);
      let killed = false;
      if (!beforeStop) {
        process.kill(pid, "SIGTERM");
        const deadline = Date.now() + graceMs;
        while (!gone(pid) && Date.now() < deadline) await Bun.sleep(50);
        if (!gone(pid)) {
          killed = true;
          process.kill(pid, "SIGKILL");
          while (!gone(pid)) await Bun.sleep(50);
        }
      }
      // Its log, where the run's other logs are.
      if (existsSync(strfryLog)) await Bun.write(o.logFile, Bun.file(strfryLog));
      return { code: null, signal: killed ? "SIGKILL" : beforeStop ? null : "SIGTERM", beforeStop, killed };
    },
  };
}
