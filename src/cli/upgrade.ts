// `relay upgrade`: replaces the relay serving a data directory without dropping its clients.
// After the new binary is installed over the old one's file, the running relay is asked
// (SIGUSR2) to start its file again with --takeover: the new process binds beside it on the
// same port, the running one hands the directory over, stops accepting and drains
// (handover/). This command waits until the new process listens.
import { loadConfig } from "../config/load.ts";
import type { TakeoverRequest } from "../handover/files.ts";
import { HANDOVER_SIGNAL, REQUEST_FILE, readState, removeState } from "../handover/files.ts";
import { lockHolder, processAlive } from "../lmdb/lock.ts";
import { parseArgs } from "./args.ts";

export const help = `relay upgrade [--config FILE] [--data DIR] [--timeout SECONDS]

Replaces the relay serving DIR by a new process started from the same file and arguments:
install the new binary over the old one first. The new process listens beside the running one
on its port; the running one hands over, stops accepting, serves its open connections until
they close (server.drainSeconds at most) and exits. No connection is dropped. Waits until the
new process listens (--timeout, default 120 s); exit code 1 if it does not (the running relay
goes on as it was: see its log).`;

export async function run(argv: string[]): Promise<number> {
  const { flags } = parseArgs(argv);
  const { config: file, timeout, ...rest } = flags;
  const seconds = timeout === undefined ? 120 : Number(timeout);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    console.error(`relay upgrade: --timeout: expected a number of seconds, got ${timeout}`);
    return 2;
  }
  const dir = loadConfig({ file, env: process.env, flags: rest }).data;
  const old = lockHolder(dir);
  if (old?.command !== "serve") {
    console.error(
      old
        ? `relay upgrade: ${dir} is in use by 'relay ${old.command}' (pid ${old.pid}), not by a relay serving it`
        : `relay upgrade: no relay serves ${dir}: start one with 'relay serve'`,
    );
    return 1;
  }
  // A request left by an earlier handover names a process that is gone or the running relay
  // itself; either way it asks nothing now.
  const left = readState<TakeoverRequest>(dir, REQUEST_FILE);
  if (left && (left.pid === old.pid || !processAlive(left.pid))) removeState(dir, REQUEST_FILE, left.pid);
  try {
    process.kill(old.pid, HANDOVER_SIGNAL);
  } catch (e) {
    console.error(`relay upgrade: cannot signal pid ${old.pid}: ${(e as Error).message}`);
    return 1;
  }
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const r = readState<TakeoverRequest>(dir, REQUEST_FILE);
    if (r && r.pid !== old.pid && r.listening && lockHolder(dir)?.pid === r.pid) {
      console.log(`relay ${r.pid} serves ${dir}; relay ${old.pid} drains its open connections, then exits`);
      return 0;
    }
    // Gone with no successor: a relay from before upgrades existed ends on the signal.
    if (!processAlive(old.pid) && lockHolder(dir) === undefined) {
      console.error(
        `relay upgrade: relay ${old.pid} has exited without handing over (a version without upgrades ends on the signal); start the new one with 'relay serve'`,
      );
      return 1;
    }
    await Bun.sleep(50);
  }
  console.error(
    `relay upgrade: no new relay took over ${dir} within ${seconds} s; relay ${old.pid} goes on (see its log)`,
  );
  return 1;
}
