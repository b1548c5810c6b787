// What two relays on one data directory tell each other during a handover (`relay serve
// --takeover`), beside the lock in the data directory:
//
//   relay.takeover  the successor's request: its pid, and whether it listens yet
//   relay.draining  the predecessor's drain: how many connections it has left, until when
//
// Each file is written whole (a rename) and readable by the owner only; the signal that says
// "look at it" (SIGUSR2) reaches a process only from its own user or root.
import { readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processAlive } from "../lmdb/lock.ts";

export const REQUEST_FILE = "relay.takeover";
export const DRAINING_FILE = "relay.draining";

/** The signal both sides send: to the predecessor, "read the request". */
export const HANDOVER_SIGNAL = "SIGUSR2";

export interface TakeoverRequest {
  pid: number;
  /** the successor is listening on the port: the predecessor stops accepting */
  listening: boolean;
}

export interface DrainState {
  pid: number;
  /** connections still open */
  connections: number;
  /** when the drain started and when it closes what is left (ms since the epoch) */
  since: number;
  deadline: number;
}

/** Writes the file whole: a reader finds the old text or the new, never part of it. */
function writeWhole(path: string, text: string, mode?: number): void {
  const tmp = `${path}.${process.pid}`;
  writeFileSync(tmp, text, { mode });
  renameSync(tmp, path);
}

export function writeState(dir: string, file: string, value: TakeoverRequest | DrainState): void {
  writeWhole(join(dir, file), `${JSON.stringify(value)}\n`, 0o600);
}

/** Written once listening: a supervisor following it (systemd's PIDFile) moves to this process. */
export function writePidFile(path: string): void {
  if (path) writeWhole(path, `${process.pid}\n`);
}

/** Removed at the end, unless a successor has written its own pid there since. */
export function removePidFile(path: string): void {
  if (!path) return;
  try {
    if (readFileSync(path, "utf8").trim() === String(process.pid)) unlinkSync(path);
  } catch {}
}

export function readState<T extends { pid: number }>(dir: string, file: string): T | undefined {
  try {
    const v = JSON.parse(readFileSync(join(dir, file), "utf8")) as T;
    return Number.isSafeInteger(v.pid) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Removes the file if it is `pid`'s (a newer handover's is left alone). */
export function removeState(dir: string, file: string, pid = process.pid): void {
  if (readState(dir, file)?.pid !== pid) return;
  try {
    unlinkSync(join(dir, file));
  } catch {}
}

/** A predecessor's drain as the successor's /metrics shows it, while that process lives. */
export function predecessorDrain(dir: string): DrainState | undefined {
  const d = readState<DrainState>(dir, DRAINING_FILE);
  return d && d.pid !== process.pid && processAlive(d.pid) ? d : undefined;
}

declare module "../context.ts" {
  interface RelayContext {
    /** set while this relay drains after handing over to a successor */
    draining?: { since: number; deadline: number };
    /**
     * the other relay writing this directory during a handover (the successor, or the
     * predecessor while it drains): readers first read what it committed (ingest/req.ts)
     */
    peer?: number;
  }
}
