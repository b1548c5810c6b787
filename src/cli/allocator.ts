// Allocator settings that must be in the environment before the process starts: `relay serve`
// executes itself again, same pid and arguments, with them set. Bun's mimalloc returns freed
// memory to the OS 100 ms after it is freed (MIMALLOC_PURGE_DELAY); at ingest rates the relay
// frees and allocates again continuously, and returning memory that soon costs CPU (page faults,
// madvise calls and the TLB shootdowns they cause on the other core): measured on the 50k-event
// ingest, about a fifth more CPU per event than never returning it (-1). Never returning it
// keeps the relay's anonymous memory at its high-water mark for good (~350 MiB after that
// ingest). The default, 1 s, measured 3-7% more CPU per event than -1 during the ingest (memory
// freed is mostly reused within a second) and brings anonymous memory back to ~90 MiB a second after the
// load stops (docs/performance.md). An MIMALLOC_PURGE_DELAY already in the environment is left
// as it is.
import type { Config } from "../config/schema.ts";

const VAR = "MIMALLOC_PURGE_DELAY";

/** Re-executes the process with the configured purge delay; returns only when it does not. */
export function tuneAllocator(config: Config): void {
  if (process.platform !== "linux" || process.env[VAR] !== undefined) return;
  if (typeof process.execve !== "function") return;
  // A compiled binary's argv[1] is its embedded entry point, not an argument.
  const compiled = process.argv[1]?.startsWith("/$bunfs/") === true;
  const args = [process.execPath, ...process.argv.slice(compiled ? 2 : 1)];
  process.execve(process.execPath, args, {
    ...process.env,
    [VAR]: String(config["process.allocatorPurgeMs"]),
  });
}
