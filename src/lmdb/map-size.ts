// How much address space each LMDB environment maps (store.mapSizeGb). One fixed map per
// environment keeps lmdb-js from mapping the files again as they grow (store.ts), so the map
// wants to be large; but a map that cannot be made crashes the process inside lmdb-js (a
// segfault, not an error). 1 TiB fits most 64-bit Linux machines, not all: an arm64 kernel with
// 39-bit virtual addresses gives user space 512 GiB (some Raspberry Pi kernels); `ulimit -v` and
// some container runtimes cap the address space; and qemu-user backs a shared file map with an
// accounted shared anonymous one, which Linux's default overcommit refuses past RAM + swap
// (under qemu 7.2 on a 24 GiB machine, maps of 20 GiB worked and 24 GiB crashed).
//
// So the default (0) is measured, not assumed: the largest power of two up to 1 TiB of which
// three maps can be made at once, made the way LMDB makes them (shared, read-only, of a file) and
// released at once. Two are the environments; the third leaves as much again for the runtime,
// the worker threads, the copy `relay compact` writes and lmdb-js growing a map. A configured
// size is checked the same way (two maps), so a size the machine cannot map is refused with a
// message instead of a crash.
import { dlopen, FFIType } from "bun:ffi";
import { closeSync, openSync, statSync } from "node:fs";
import { join } from "node:path";

/** The largest map the default takes, in GiB: more than any one relay's data. */
export const MAX_AUTO_MAP_SIZE_GB = 1024;
/** Maps of the chosen size the default must be able to make at once. */
const AUTO_MAPS = 3;
/** When the address space cannot be measured (no libc.so.6, say): it worked everywhere tried. */
const UNMEASURED_MAP_SIZE_GB = 16;

const PROT_READ = 1;
const MAP_SHARED = 1;

export interface MapSize {
  /** GiB per environment */
  gb: number;
  /** how it was chosen, for the start-up line */
  how: string;
}

type Mapper = { mmap: (bytes: number, fd: number) => bigint; munmap: (addr: bigint, bytes: number) => void };

let mapper: Mapper | null | undefined;

function loadMapper(): Mapper | null {
  if (process.platform !== "linux") return null;
  try {
    const { symbols } = dlopen("libc.so.6", {
      mmap: {
        args: [FFIType.u64, FFIType.u64, FFIType.i32, FFIType.i32, FFIType.i32, FFIType.i64],
        returns: FFIType.i64,
      },
      munmap: { args: [FFIType.i64, FFIType.u64], returns: FFIType.i32 },
    });
    return {
      mmap: (bytes, fd) => BigInt(symbols.mmap(0, bytes, PROT_READ, MAP_SHARED, fd, 0)),
      munmap: (addr, bytes) => void symbols.munmap(addr, bytes),
    };
  } catch {
    return null;
  }
}

/**
 * Whether `count` maps of `gb` GiB each can be made at once (undefined where it cannot be
 * measured). They map this executable, as LMDB maps data.mdb: past the end of a file is allowed.
 */
export function canMap(gb: number, count: number): boolean | undefined {
  mapper ??= loadMapper();
  if (!mapper) return undefined;
  const bytes = Math.round(gb * 2 ** 30);
  let fd: number;
  try {
    fd = openSync(process.execPath, "r");
  } catch {
    return undefined; // an executable this user may run but not read
  }
  const made: bigint[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const addr = mapper.mmap(bytes, fd);
      if (addr === -1n) return false;
      made.push(addr);
    }
    return true;
  } finally {
    for (const addr of made) mapper.munmap(addr, bytes);
    closeSync(fd);
  }
}

/** The largest power of two up to MAX_AUTO_MAP_SIZE_GB that `fits`, or undefined if not even 1. */
export function largestFitting(fits: (gb: number) => boolean): number | undefined {
  for (let gb = MAX_AUTO_MAP_SIZE_GB; gb >= 1; gb /= 2) if (fits(gb)) return gb;
  return undefined;
}

const chosen = new Map<number, MapSize>();

/**
 * The map size for `configured` GiB (0 or undefined: sized from the address space), measured
 * once per process and thread. Throws when the configured size, or even the smallest default,
 * cannot be mapped.
 */
export function chooseMapSize(configured = 0): MapSize {
  const known = chosen.get(configured);
  if (known) return known;
  const choice = configured > 0 ? checkConfigured(configured) : measure();
  chosen.set(configured, choice);
  return choice;
}

function checkConfigured(gb: number): MapSize {
  if (canMap(gb, 2) === false) {
    const fits = largestFitting((g) => canMap(g, 2) === true);
    throw new Error(
      `store.mapSizeGb ${gb}: this machine cannot map two environments of ${gb} GiB ` +
        `(${fits === undefined ? "not even 1 GiB each fits" : `${fits} GiB each would fit`}: the address space is limited, ` +
        "by ulimit -v, a 39-bit kernel or an emulator); lower it, or set 0 to size it from what the machine offers",
    );
  }
  return { gb, how: `${gb} GiB per environment (store.mapSizeGb)` };
}

function measure(): MapSize {
  if (process.platform !== "linux")
    return { gb: MAX_AUTO_MAP_SIZE_GB, how: `${MAX_AUTO_MAP_SIZE_GB} GiB per environment (default)` };
  if (canMap(1, 1) === undefined)
    return {
      gb: UNMEASURED_MAP_SIZE_GB,
      how: `${UNMEASURED_MAP_SIZE_GB} GiB per environment (the address space could not be measured)`,
    };
  const gb = largestFitting((g) => canMap(g, AUTO_MAPS) === true);
  if (gb === undefined)
    throw new Error(
      `cannot map the store: not even ${AUTO_MAPS} maps of 1 GiB fit in this process's address space (ulimit -v?)`,
    );
  const why =
    gb === MAX_AUTO_MAP_SIZE_GB ? "the most it takes" : `${AUTO_MAPS} maps of ${gb * 2} GiB did not fit`;
  return { gb, how: `${gb} GiB per environment (sized from the address space: ${why})` };
}

/**
 * The map of a derived environment written through a writable map. LMDB makes the file as long
 * as the map, so a map of the fixed size the other environment takes (up to 1 TiB) would be a
 * sparse file of that length, which plain copies (cp without --sparse, rsync without -S, tar
 * without -S, Node's fs.cp) write out in full. So it starts at twice what the file holds (at
 * least MIN_WRITE_MAP), and lmdb-js doubles it as the data grows. Never below the file's length:
 * LMDB cuts the file to the map's size at open, and another process of the relay (a handover's
 * predecessor) may still have it mapped further.
 */
export function writeMapSize(dir: string, most: number): number {
  let size = 0;
  let onDisk = 0;
  try {
    const st = statSync(join(dir, "data.mdb"));
    size = st.size;
    onDisk = st.blocks * 512;
  } catch {
    // a new environment
  }
  let map = MIN_WRITE_MAP;
  while (map < 2 * onDisk) map *= 2;
  return Math.min(most, Math.max(map, size));
}

/** The least map of a derived environment written through a writable map (writeMapSize). */
const MIN_WRITE_MAP = 64 * 2 ** 20;
