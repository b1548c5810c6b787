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

export function writeState(dir: string, file: string, value: TakeoverRequest | DrainState): void {
  const path = join(dir, file);
  const tmp = `${path}.${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(value)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
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

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A predecessor's drain as the successor's /metrics shows it, while that process lives. */
export function predecessorDrain(dir: string): DrainState | undefined {
  const d = readState<DrainState>(dir, DRAINING_FILE);
  return d && d.pid !== process.pid && isAlive(d.pid) ? d : undefined;
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
