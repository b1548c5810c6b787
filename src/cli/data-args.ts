// What the data commands (import, export, stats, compact, delete) share: argument checking with
// usage errors (exit 2) apart from I/O errors (exit 1), the configuration (--data, --config,
// RELAY_DATA...), opening an existing data directory, and the --filter/--since/--until readers.
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { type Derived, openDerived } from "../derived.ts";
import type { Filter } from "../nostr/filter.ts";
import { parseFilter } from "../nostr/filter.ts";
import { DirLocked, lockDir, lockHolder } from "../store/lock.ts";
import { closeStore, openStore, type Store } from "../store/store.ts";
import { isReject } from "../wire/reasons.ts";
/** Bad arguments: one line on stderr, exit status 2. */
import { parseArgs, stdoutDrained, UsageError } from "./args.ts";

export { UsageError };
/** The data or a file could not be read or written: one line on stderr, exit status 1. */
export class IoError extends Error {}

/** Runs a command body, turning UsageError into status 2 and IoError into status 1. */
export async function guarded(name: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`relay ${name}: ${e.message}`);
      return 2;
    }
    if (e instanceof IoError) {
      console.error(`relay ${name}: ${e.message}`);
      return 1;
    }
    throw e;
  }
}

export interface CommandArgs {
  positional: string[];
  flags: Record<string, string>;
  config: Config;
}

/**
 * Reads argv: `booleans` are flags without a value, `options` flags with one; --data and
 * --config are always accepted and resolved through loadConfig like `relay serve` does.
 */
export function commandArgs(
  argv: readonly string[],
  spec: { booleans?: readonly string[]; options?: readonly string[]; positional: number },
): CommandArgs {
  const known = new Set([...(spec.booleans ?? []), ...(spec.options ?? []), "data", "config"]);
  // Unknown options first, so `--bogus` is called unknown rather than "needs a value".
  for (let i = 0; i < argv.length && argv[i] !== "--"; i++) {
    const a = argv[i]!;
    if (!a.startsWith("--")) continue;
    const name = a.slice(2).split("=")[0]!;
    if (!known.has(name)) throw new UsageError(`unknown option --${name}`);
    if (!a.includes("=") && !spec.booleans?.includes(name)) i++;
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(argv, spec.booleans ?? []);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { positional, flags } = parsed;
  for (const b of spec.booleans ?? [])
    if (flags[b] !== undefined && flags[b] !== "true") throw new UsageError(`--${b} takes no value`);
  const stray = positional.find((p) => p.startsWith("-") && p !== "-");
  if (stray !== undefined) throw new UsageError(`unknown option ${stray}`);
  if (positional.length > spec.positional)
    throw new UsageError(`unexpected argument '${positional[spec.positional]}'`);
  const config = loadConfig({
    file: flags.config,
    env: process.env,
    flags: flags.data === undefined ? {} : { data: flags.data },
  });
  return { positional, flags, config };
}

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
  derived: Derived;
  /**
   * the pid of the relay serving this directory, when there is one: it applies what this
   * command writes to its derived indexes (and serves it) within a second
   */
  relayPid: number | undefined;
  /** Brings the derived indexes (search, counters) up to what was written; before closing. */
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
    const derived = openDerived(store, config, {
      log: (line) => console.error(line),
      consumers: relayPid === undefined,
    });
    const opened = store;
    return {
      store,
      derived,
      relayPid,
      finish: () => {
        if (relayPid === undefined) derived.runner.catchUp();
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

/** A time: unix seconds, or an ISO 8601 date/time (`2024-05-01`, `2024-05-01T12:00:00Z`). */
export function parseTime(value: string, name: string): number {
  if (/^\d+$/.test(value)) {
    const n = Number(value);
    if (Number.isSafeInteger(n)) return n;
  } else if (/^\d{4}-\d{2}-\d{2}/.test(value)) {
    const ms = Date.parse(value);
    if (!Number.isNaN(ms) && ms >= 0) return Math.floor(ms / 1000);
  }
  throw new UsageError(`--${name} must be unix seconds or an ISO 8601 date, got '${value}'`);
}

/**
 * --filter JSON (one NIP-01 filter, checked like a REQ's) narrowed by --since/--until. `limit`
 * and `search` are refused: these commands act on every match, not on the newest N.
 */
export function filterFromFlags(flags: Record<string, string>): Filter {
  let f: Filter = {};
  if (flags.filter !== undefined) {
    let raw: unknown;
    try {
      raw = JSON.parse(flags.filter);
    } catch (e) {
      throw new UsageError(`--filter is not JSON: ${(e as Error).message}`);
    }
    const parsed = parseFilter(raw, { maxFilterValues: Number.MAX_SAFE_INTEGER });
    if (isReject(parsed)) throw new UsageError(`--filter: ${parsed.message}`);
    if (parsed.limit !== undefined) throw new UsageError("--filter: limit is not supported here");
    if (parsed.search !== undefined) throw new UsageError("--filter: search is not supported here");
    f = parsed;
  }
  if (flags.since !== undefined) {
    const t = parseTime(flags.since, "since");
    f.since = Math.max(f.since ?? 0, t);
  }
  if (flags.until !== undefined) {
    const t = parseTime(flags.until, "until");
    f.until = Math.min(f.until ?? Number.MAX_SAFE_INTEGER, t);
  }
  return f;
}

/** Writes to stdout in large chunks, waiting for `drain`; stops quietly when the reader left. */
export class StdoutSink {
  private parts: Buffer[] = [];
  private size = 0;
  /** true once stdout is closed (EPIPE: `relay export | head`) */
  closed = false;
  private readonly onError = (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") this.closed = true;
    else this.failure = e;
  };
  private failure: Error | undefined;

  constructor(private readonly highWater = 1 << 20) {
    process.stdout.on("error", this.onError);
  }

  /** Queues bytes; resolves at once unless a chunk had to be written out. */
  async write(b: Buffer | string): Promise<void> {
    const buf = typeof b === "string" ? Buffer.from(b) : b;
    this.parts.push(buf);
    this.size += buf.length;
    if (this.size >= this.highWater) await this.flush();
  }

  private check(): void {
    if (this.failure) throw new IoError(`cannot write to stdout: ${this.failure.message}`);
  }

  async flush(): Promise<void> {
    this.check();
    if (this.size === 0 || this.closed) return;
    const chunk = Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    const more = process.stdout.write(chunk);
    if (!more && !this.closed) await stdoutDrained();
    this.check();
  }

  /** Flushes what is left and waits until stdout has taken it. */
  async end(): Promise<void> {
    await this.flush();
    if (this.closed) return;
    await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
    process.stdout.off("error", this.onError);
  }
}

export const fmtInt = (n: number): string => n.toLocaleString("en-US");

export function fmtBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} B` : `${v.toFixed(1)} ${units[u]}`;
}

export function fmtDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (x: number) => String(x).padStart(2, "0");
  return h > 0 ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

export const isoTime = (t: number): string =>
  t * 1000 <= 8.64e15 ? new Date(t * 1000).toISOString().replace(".000Z", "Z") : "far future";
