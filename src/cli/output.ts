// What every command that reports shares: exit codes for usage errors (2) apart from I/O errors
// (1), a stdout writer that waits on a full pipe, and how counts, sizes and times are printed.
import { stdoutDrained, UsageError } from "./args.ts";

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
