// What this process runs on that the rest of the relay adapts to: an emulator under it.
import { statSync } from "node:fs";

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
