// Progress on stderr for long data commands: on a terminal a bar redrawn in place with the rate
// and ETA (ETA only when the total is known), otherwise a plain line every few seconds so logs
// from cron or systemd stay readable.
import { UsageError } from "../args.ts";
import { fmtBytes, fmtDuration, fmtInt } from "../output.ts";

export interface ProgressOptions {
  /** total bytes to read, when known (a file; not a pipe) */
  totalBytes?: number;
  /** or: counting items (`unit`) up to a known total instead of bytes and lines */
  total?: number;
  unit?: string;
  /** redraw a bar in place; default: stderr is a terminal */
  tty?: boolean;
  /** seconds between plain lines when not on a terminal */
  every?: number;
  quiet?: boolean;
}

/**
 * `--progress-every SECONDS`: how often the plain progress lines come (default 5); each line
 * states what is committed by then, so a log of them says what an interrupted run left on disk.
 */
export function progressEvery(flags: Record<string, string>): number | undefined {
  const v = flags["progress-every"];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n) || n < 0)
    throw new UsageError(`--progress-every must be a number of seconds (0 or more), got '${v}'`);
  return n;
}

export class Progress {
  private readonly started = performance.now();
  private last = 0;
  private drawn = false;
  private readonly tty: boolean;
  private readonly everyMs: number;

  constructor(
    private readonly label: string,
    private readonly o: ProgressOptions = {},
  ) {
    this.tty = o.tty ?? process.stderr.isTTY === true;
    this.everyMs = (o.every ?? 5) * 1000;
  }

  /** Seconds since start. */
  get elapsed(): number {
    return (performance.now() - this.started) / 1000;
  }

  /**
   * Called often; draws at most 10 times a second (terminal) or every `every` seconds. `note`
   * ends the line (what is committed so far).
   */
  update(bytes: number, events: number, note?: () => string): void {
    if (this.o.quiet) return;
    const now = performance.now();
    if (this.last === 0) {
      // The first plain line only after one full period (short runs print only the summary), the
      // first bar after a moment, so its rate and ETA mean something.
      this.last = this.tty ? now + 150 : now;
      return;
    }
    if (now - this.last < (this.tty ? 100 : this.everyMs)) return;
    this.last = now;
    this.draw(bytes, events, note?.());
  }

  private draw(bytes: number, events: number, note: string | undefined): void {
    const secs = this.elapsed;
    const rate = secs > 0 ? events / secs : 0;
    const counting = this.o.total !== undefined;
    const total = counting ? this.o.total : this.o.totalBytes;
    const frac = total ? Math.min(1, (counting ? events : bytes) / total) : undefined;
    const eta = frac !== undefined && frac > 0 ? fmtDuration(secs / frac - secs) : undefined;
    const stats = counting
      ? `${fmtInt(events)} of ${fmtInt(total ?? 0)} ${this.o.unit ?? "items"}, ${fmtInt(Math.round(rate))}/s`
      : `${fmtInt(events)} lines, ${fmtInt(Math.round(rate))}/s, ${fmtBytes(bytes)}${note ? `, ${note}` : ""}`;
    if (!this.tty) {
      const pct = frac === undefined ? "" : ` (${(frac * 100).toFixed(1)}%${eta ? `, ETA ${eta}` : ""})`;
      process.stderr.write(`${this.label}: ${stats}${pct}\n`);
      return;
    }
    let line: string;
    if (frac !== undefined) {
      const width = 30;
      const fill = Math.round(frac * width);
      const bar = `${"#".repeat(fill)}${"-".repeat(width - fill)}`;
      line = `${this.label} [${bar}] ${(frac * 100).toFixed(1).padStart(5)}%  ${stats}  ETA ${eta ?? "?"}`;
    } else line = `${this.label} ${stats}  ${fmtDuration(secs)} elapsed`;
    process.stderr.write(`\r\x1b[2K${line}`);
    this.drawn = true;
  }

  /** Clears the bar so the summary starts on a clean line. */
  done(): void {
    if (this.drawn) process.stderr.write("\r\x1b[2K");
    this.drawn = false;
  }
}
