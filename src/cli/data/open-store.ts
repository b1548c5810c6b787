// How a data command takes a data directory: an existing one read-only, or one to write, beside
// a running relay or locked for this command alone, with the indexes the server derives.
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../../config/schema.ts";
import { type Consumers, openConsumers } from "../../consumers/registry.ts";
import { DirLocked, lockDir, lockHolder } from "../../lmdb/lock.ts";
import { closeStore, openStore } from "../../store/store.ts";
import type { Store } from "../../store/types.ts";
import { IoError } from "../output.ts";

/** Opens the store of an existing data directory; never creates an empty one by mistake. */
export function openExisting(dir: string, mapSizeGb?: number): Store {
  if (!existsSync(join(dir, "data.mdb"))) throw new IoError(`no relay data in ${dir} (no data.mdb)`);
  try {
    return openStore(dir, { mapSizeGb });
  } catch (e) {
    throw new IoError(`cannot open ${dir}: ${(e as Error).message}`);
  }
}

export interface WritableStore {
  store: Store;
  consumers: Consumers;
  /**
   * the pid of the relay serving this directory, when there is one: it applies what this
   * command writes to its derived indexes (and serves it) within a second
   */
  relayPid: number | undefined;
  /** Brings the derived indexes (REQ indexes, search, NIP-45 counts, API counters) up to what was written; before closing. */
  finish(): void;
  /** Closes the store and gives the directory back. */
  close(): Promise<void>;
}

/**
 * Takes the data directory for a data command that writes: beside a running relay (which then
 * owns the derived indexes), else for this command alone (a relay started meanwhile refuses).
 * Returns the relay's pid, or the lock's release.
 */
export function claimForWrite(dir: string, command: string): { relayPid?: number; release?: () => void } {
  const h = lockHolder(dir);
  if (h?.command === "serve") return { relayPid: h.pid };
  if (h) throw new IoError(`${dir} is in use by 'relay ${h.command}' (pid ${h.pid}); wait for it to finish`);
  try {
    return { release: lockDir(dir, command) };
  } catch (e) {
    if (e instanceof DirLocked) throw new IoError(e.message);
    throw new IoError(`cannot lock ${dir}: ${(e as Error).message}`);
  }
}

/**
 * Opens an existing store for a command that must have the directory to itself (it rebuilds or
 * repairs what a running relay keeps): refused, naming the relay's pid, while one serves it.
 * `stop` says what to do instead. The caller calls `release` after closing the store.
 */
export function openAlone(
  config: Config,
  command: string,
  stop: string,
): { store: Store; release: () => void } {
  const { relayPid, release = () => {} } = claimForWrite(config.data, command);
  if (relayPid !== undefined)
    throw new IoError(`'relay serve' (pid ${relayPid}) is running on ${config.data}; ${stop}`);
  try {
    return { store: openExisting(config.data, config["store.mapSizeGb"]), release };
  } catch (e) {
    release();
    throw e;
  }
}

/**
 * Opens the store for writing with what `startRelay` derives from it (NIP-40 expiry, NIP-50
 * search and the API counters when enabled), so events written or removed here leave every
 * index as the server would. Beside a running relay the relay applies the derived indexes (two
 * processes applying them would apply some events twice); otherwise this command does.
 * Creates the directory unless `mustExist`.
 */
export function openForWrite(config: Config, mustExist: boolean, command: string): WritableStore {
  const mapSizeGb = config["store.mapSizeGb"];
  const dir = config.data;
  if (mustExist && !existsSync(join(dir, "data.mdb")))
    throw new IoError(`no relay data in ${dir} (no data.mdb)`);
  if (!mustExist)
    try {
      mkdirSync(dir, { recursive: true });
    } catch (e) {
      throw new IoError(`cannot open ${dir}: ${(e as Error).message}`);
    }
  const { relayPid, release } = claimForWrite(dir, command);
  let store: Store | undefined;
  try {
    store = mustExist ? openExisting(dir, mapSizeGb) : openOrCreate(dir, mapSizeGb);
    const consumers = openConsumers(store, config, {
      log: (line) => console.error(line),
      consumers: relayPid === undefined,
    });
    const opened = store;
    return {
      store,
      consumers,
      relayPid,
      finish: () => {
        if (relayPid === undefined) consumers.runner.catchUp();
      },
      close: async () => {
        try {
          await closeStore(opened);
        } finally {
          release?.();
        }
      },
    };
  } catch (e) {
    if (store) void closeStore(store);
    release?.();
    throw e;
  }
}

function openOrCreate(dir: string, mapSizeGb: number): Store {
  try {
    return openStore(dir, { mapSizeGb });
  } catch (e) {
    throw new IoError(`cannot open ${dir}: ${(e as Error).message}`);
  }
}

/** Size of the LMDB data file in bytes (apparent, and allocated on disk). */
export function dataFileSize(dir: string): { bytes: number; onDisk: number } {
  const st = statSync(join(dir, "data.mdb"));
  return { bytes: st.size, onDisk: st.blocks * 512 };
}
