// Which process owns a data directory. The relay (`relay serve`) owns it while it runs: it alone
// applies the consumers of the log (derived/) and watches for other processes' commits, so a
// second relay on the same directory is refused. A data command that writes (import, delete,
// reindex) takes the lock itself when no relay runs, and otherwise writes beside the relay,
// which notices its commits. The lock is a file naming its owner's pid; a lock whose process
// is gone (killed with kill -9) is stale and taken over.
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The file in the data directory. */
export const LOCK_FILE = "relay.lock";

export interface LockHolder {
  pid: number;
  /** the command that holds it: serve, import, delete, reindex */
  command: string;
  /** /proc/PID/cmdline when it was taken (Linux), to tell a reused pid from the owner */
  cmdline?: string;
}

/** The directory is held by another live process. */
export class DirLocked extends Error {
  constructor(
    readonly holder: LockHolder,
    dir: string,
  ) {
    super(`${dir} is in use by 'relay ${holder.command}' (pid ${holder.pid})`);
  }
}

/** Locks this process holds, by directory: the pid in them is ours and still live. */
const held = new Map<string, string>();

function procCmdline(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "latin1");
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid exists (one of another user's included). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function alive(h: LockHolder, path: string): boolean {
  // Our own pid is live only for a lock this process took (a container restarted with the
  // same pid finds its predecessor's file).
  if (h.pid === process.pid) return held.has(path);
  if (!processAlive(h.pid)) return false;
  // A live pid that runs something else now: the owner died and its pid was reused.
  const now = h.cmdline === undefined ? undefined : procCmdline(h.pid);
  return now === undefined || now === h.cmdline;
}

function readHolder(path: string): LockHolder | undefined {
  try {
    const h = JSON.parse(readFileSync(path, "utf8")) as LockHolder;
    return Number.isSafeInteger(h.pid) && typeof h.command === "string" ? h : undefined;
  } catch {
    return undefined;
  }
}

/** The live process holding the directory's lock, if any. */
export function lockHolder(dir: string): LockHolder | undefined {
  const path = join(dir, LOCK_FILE);
  const h = readHolder(path);
  return h && alive(h, path) ? h : undefined;
}

/**
 * Takes the directory's lock for `command`; returns its release. Throws DirLocked when another
 * live process holds it. A stale lock (its process is gone) is replaced.
 */
export function lockDir(dir: string, command: string): () => void {
  const path = join(dir, LOCK_FILE);
  const me: LockHolder = { pid: process.pid, command, cmdline: procCmdline(process.pid) };
  for (let attempt = 0; ; attempt++) {
    try {
      // wx: created only if absent, so of two processes starting at once one wins.
      writeFileSync(path, `${JSON.stringify(me)}\n`, { flag: "wx" });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    let h = readHolder(path);
    if (!h) {
      // Perhaps created a moment ago and not yet written: look again before calling it stale.
      Bun.sleepSync(100);
      h = readHolder(path);
    }
    if (h && alive(h, path)) throw new DirLocked(h, dir);
    // Stale, or half written by a process that died creating it: take it over.
    if (attempt >= 3) throw new Error(`cannot take the lock ${path}`);
    try {
      unlinkSync(path);
    } catch {}
  }
  held.set(path, command);
  return () => {
    if (!held.delete(path)) return;
    if (readHolder(path)?.pid === process.pid) unlinkSync(path);
  };
}
