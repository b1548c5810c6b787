// How this process was started, to start the same program again: the re-execution that tunes
// the runtime (cli/runtime-env.ts) and the successor an upgrade starts (predecessor.ts).
import { statSync } from "node:fs";

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

/**
 * Why executing process.execPath would not run this program as it runs now, if it would not:
 * under qemu-user (started as `qemu-aarch64 relay`, or through binfmt_misc) the kernel runs the
 * emulator, which reports the emulated program as the executable; executing that directly
 * fails for another architecture (ENOEXEC) and leaves the emulation for this one (losing, say,
 * `-cpu Nehalem`). The kernel's own view is /proc/self/exe followed by stat, which qemu does not
 * intercept (it does readlink and open of it).
 */
export function runByAnotherProgram(): string | undefined {
  try {
    const real = statSync("/proc/self/exe");
    const self = statSync(process.execPath);
    if (real.dev === self.dev && real.ino === self.ino) return undefined;
  } catch {
    return undefined;
  }
  return `run by an emulator such as qemu-user, which executing ${process.execPath} again would leave or fail`;
}
