// Runtime settings that must be in the environment before the process starts: `relay serve`
// executes itself again, same pid and arguments, with them set. A variable already in the
// environment is left as it is, so an operator can override either. Under an emulator the
// process does not execute itself again and runs without them (runByAnotherProgram).
//
// MIMALLOC_PURGE_DELAY: Bun's mimalloc returns freed memory to the OS 100 ms after it is freed;
// at ingest rates the relay frees and allocates again continuously, and returning memory that
// soon costs CPU (page faults, madvise calls and the TLB shootdowns they cause on the other
// core): measured on the 50k-event ingest, about a fifth more CPU per event than never
// returning it (-1). Never returning it keeps the relay's anonymous memory at its high-water
// mark for good (~350 MiB after that ingest). The default, 1 s (`process.allocatorPurgeMs`),
// measured 3-7% more CPU per event than -1 during the ingest (memory freed is mostly reused
// within a second) and brings anonymous memory back to ~90 MiB a second after the load stops
// (docs/performance.md).
//
// BUN_JSC_thresholdForFTLOptimizeAfterWarmUp: JavaScriptCore compiles a function with its top
// tier (FTL) once it has run this much; at its default a fresh relay spent 14-18 µs of JIT
// thread CPU per event of the 50k ingest, much of it compiling functions that then fell back
// and were compiled again. Ten times the default leaves the top tier to the code that is really
// hot (a search's posting walk gets there as fast: 0.88 ms a search either way): 6-7 µs of JIT
// per event, and the relay's CPU per event lower in five alternating pairs out of five (median
// 172 -> 167 µs). It only delays compiling: a long-running relay ends with the same code.
import type { Config } from "../config/schema.ts";
import { ownCommandLine } from "../handover/command-line.ts";
import { runByAnotherProgram } from "../platform.ts";

// BUN_JSC_forceRAMSize (`process.gcRamMb`, 256 MiB by default): JavaScriptCore lets a heap grow
// in proportion to the memory it sees (the machine's, or its memory cgroup's) before collecting.
// On a 24 GiB machine the main thread's heap swung between 80 and 325 MB for ~60 MB live during a
// million-event ingest. Told 256 MiB, the relay's peak anonymous memory over that ingest was
// 231-233 MiB against ~450 at the machine's figure, for ~5% fewer events a second (more
// collections; docs/performance.md). 0 leaves it unset.
const PURGE = "MIMALLOC_PURGE_DELAY";
const RAM = "BUN_JSC_forceRAMSize";
const FTL = "BUN_JSC_thresholdForFTLOptimizeAfterWarmUp";
const FTL_THRESHOLD = "1000000";

/**
 * Re-executes the process with the runtime settings it lacks; returns only when it does not,
 * saying why for the start-up line. Bun reads them before any JavaScript runs and offers no way
 * to set them later, so where the process cannot execute itself again the relay runs without
 * them (only slower, or with more memory kept).
 */
export function tuneRuntime(config: Config): string {
  const missing: Record<string, string> = {};
  if (process.env[PURGE] === undefined) missing[PURGE] = String(config["process.allocatorPurgeMs"]);
  if (process.env[FTL] === undefined) missing[FTL] = FTL_THRESHOLD;
  if (process.env[RAM] === undefined && config["process.gcRamMb"] > 0)
    missing[RAM] = String(config["process.gcRamMb"] * 2 ** 20);
  const names = Object.keys(missing);
  if (names.length === 0) return "settings from the environment";
  const without = `without ${names.join(", ")}`;
  if (process.platform !== "linux" || typeof process.execve !== "function")
    return `${without} (this platform cannot execute the process again)`;
  const emulator = runByAnotherProgram();
  if (emulator) return `${without} (${emulator})`;
  // Bun's CPU profiler samples the main thread by sending it SIGPWR from another thread. A
  // signal sent just before execve stays pending across it, and the new image, whose
  // disposition for SIGPWR is the default (terminate), dies before any of its code runs: 7 in
  // 10 starts at a 10 µs sampling interval, and it happened on CI at the default 1 ms. No API stops
  // the profiler first, so a profiled process keeps running as it is.
  if (process.execArgv.some((a) => a.startsWith("--cpu-prof")))
    return `${without} (a CPU profiler samples this process with signals, which would kill it executed again; set them in the environment to profile with them)`;
  // Without Bun's own flags the process that runs would not be the one asked for (no profile
  // written): ownCommandLine keeps them.
  const args = ownCommandLine();
  try {
    process.execve(process.execPath, args, { ...process.env, ...missing });
  } catch (e) {
    return `${without} (executing ${process.execPath} again failed: ${(e as Error).message})`;
  }
  return without; // not reached: execve replaces the process
}
