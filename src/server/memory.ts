// Where the relay's anonymous memory is, for /metrics: the kernel's count (RssAnon) and the two
// allocators it comes from. Why: at a million events the JavaScript heaps the relay reports
// were under half of its anonymous memory, and only the allocators' own counts told the rest
// apart (docs/performance/2026-11.md, "Where the anonymous memory is"):
// - the runtime's allocator (Bun's mimalloc) holds every thread's JavaScript heap, its strings
//   and buffers;
// - the C library's malloc holds what native modules allocate, above all LMDB's copies of the
//   pages a write transaction changes (lmdb/dirty-pages.ts).
// What an allocator counts is what it handed out and was not freed; a large block handed out
// and not yet written is not resident, so the counts can pass RssAnon (an idle relay: ~74 MB
// through the runtime's allocator, 37 MB anonymous).

import { dlopen, FFIType, ptr } from "bun:ffi";
import type { HeapStats } from "bun:jsc";
import { readFileSync } from "node:fs";

export interface MemoryParts {
  /** the kernel's resident anonymous memory of the process (RssAnon), or undefined off Linux */
  anon: number | undefined;
  /** bytes allocated through the runtime's allocator, or undefined when it does not say */
  runtime: number | undefined;
  /** bytes allocated through the C library's malloc (glibc's mallinfo2), or undefined */
  libc: number | undefined;
}

/** RssAnon of /proc/self/status, in bytes. */
function rssAnon(): number | undefined {
  try {
    const m = /^RssAnon:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

interface Counter {
  current?: number;
}

/** mimalloc's statistics as Bun's heapStats() gives them (a field its types do not declare). */
function runtimeAllocated(h: HeapStats): number | undefined {
  const m = (h as HeapStats & { mimalloc?: { malloc_normal?: Counter; malloc_huge?: Counter } }).mimalloc;
  const normal = m?.malloc_normal?.current;
  const huge = m?.malloc_huge?.current;
  return typeof normal === "number" && typeof huge === "number" ? normal + huge : undefined;
}

let mallinfo2: ((out: BigUint64Array) => void) | null | undefined;

/**
 * glibc's mallinfo2(), or null where there is none (musl, other systems, glibc before 2.33) and
 * on arm64: there the call dies with SIGILL under qemu-aarch64 (the release smoke test's arm64
 * run, any -cpu), which took the relay down on its first /metrics. Without arm64 hardware to show
 * that only the emulator does it, the libc series is left out there rather than risk a crash.
 */
function loadMallinfo(): ((out: BigUint64Array) => void) | null {
  if (process.platform !== "linux" || process.arch !== "x64") return null;
  try {
    const lib = dlopen("libc.so.6", { mallinfo2: { args: [FFIType.ptr], returns: FFIType.void } });
    return (out) => lib.symbols.mallinfo2(ptr(out));
  } catch {
    return null;
  }
}

/** struct mallinfo2: ten size_t fields; in use = uordblks (7, in arenas) + hblkhd (4, mapped). */
const info = new BigUint64Array(10);

function libcAllocated(): number | undefined {
  if (mallinfo2 === undefined) mallinfo2 = loadMallinfo();
  if (!mallinfo2) return undefined;
  mallinfo2(info);
  return Number(info[7]! + info[4]!);
}

/** The parts, from the heap statistics the caller took anyway (heapStats() walks the heap). */
export function memoryParts(h: HeapStats): MemoryParts {
  return { anon: rssAnon(), runtime: runtimeAllocated(h), libc: libcAllocated() };
}
