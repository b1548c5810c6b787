// The new process's side of a handover (`relay serve --takeover`, e.g. a new binary): it asks
// the relay that holds the directory to hand it over, waits for the lock (the predecessor has
// applied what it had and stopped applying), starts, and once it listens beside the
// predecessor on the shared port says so; the predecessor then stops accepting and drains.

import { DirLocked, lockDir, processAlive } from "../lmdb/lock.ts";
import { log } from "../log.ts";
import { HANDOVER_SIGNAL, REQUEST_FILE, writeState } from "./files.ts";

/** How long the predecessor may take to hand over (applying its backlog first). */
const HANDOVER_WAIT_MS = 120_000;
const LOOK_MS = 20;

export interface TakenOver {
  /** releases the directory's lock */
  unlock: () => void;
  /** the process that handed over, if one did (none: the directory was free) */
  predecessor?: number;
}

/** Takes the directory's lock from the relay serving it, or at once when none does. */
export async function takeOver(dir: string): Promise<TakenOver> {
  let asked: number | undefined;
  const started = Date.now();
  for (;;) {
    try {
      return { unlock: lockDir(dir, "serve"), predecessor: asked };
    } catch (e) {
      if (!(e instanceof DirLocked)) throw e;
      const h = e.holder;
      if (h.command !== "serve")
        throw new Error(`${e.message}; --takeover takes over from a running relay, not from a data command`);
      if (h.pid !== asked) {
        writeState(dir, REQUEST_FILE, { pid: process.pid, listening: false });
        process.kill(h.pid, HANDOVER_SIGNAL);
        log.info("asked the running relay to hand over", { pid: h.pid });
        asked = h.pid;
      }
    }
    if (Date.now() - started > HANDOVER_WAIT_MS)
      throw new Error(`relay ${asked} did not hand ${dir} over within ${HANDOVER_WAIT_MS / 1000} s`);
    await Bun.sleep(LOOK_MS);
  }
}

/** Tells the predecessor that this process accepts connections now: it stops accepting. */
export function announceListening(dir: string, predecessor: number): void {
  writeState(dir, REQUEST_FILE, { pid: process.pid, listening: true });
  if (!processAlive(predecessor)) return;
  try {
    process.kill(predecessor, HANDOVER_SIGNAL);
  } catch {}
}
