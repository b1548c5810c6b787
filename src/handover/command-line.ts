// How this process was started, to start the same program again: the re-execution that tunes
// the runtime (cli/runtime-env.ts) and the successor an upgrade starts (predecessor.ts). Whether
// an emulator runs it is ../platform.ts's.

/**
 * The command line that runs this program again as it was started: a compiled binary's argv[1]
 * is its embedded entry point, not an argument; from source, Bun's own flags (`bun --heap-prof
 * src/main.ts`) are in execArgv, not argv.
 */
export function ownCommandLine(): string[] {
  const compiled = process.argv[1]?.startsWith("/$bunfs/") === true;
  return compiled
    ? [process.execPath, ...process.argv.slice(2)]
    : [process.execPath, ...process.execArgv, ...process.argv.slice(1)];
}
