// The relay's log: one line per record, as text (`time level msg key=value…`) or JSON (one object
// per line with time, level, msg and the fields). error and warn go to stderr, info and debug to
// stdout. The level and format are set from log.level and log.format at start and on reload; a
// record below the level costs one comparison, so debug lines may sit on busy paths.

export type Level = "error" | "warn" | "info" | "debug";
export type Fields = Record<string, unknown>;

const RANK: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3 };

let threshold = RANK.info;
let json = false;

export function configureLog(o: { level: string; format: string }): void {
  threshold = RANK[o.level as Level] ?? RANK.info;
  json = o.format === "json";
}

/** Whether records at this level are written (to skip building costly fields). */
export const logs = (level: Level): boolean => RANK[level] <= threshold;

function text(v: unknown): string {
  const s = typeof v === "string" ? v : v instanceof Error ? v.message : JSON.stringify(v);
  return s !== undefined && /^[^\s"=]+$/.test(s) ? s : JSON.stringify(s ?? null);
}

function write(level: Level, msg: string, fields: Fields = {}): void {
  if (RANK[level] > threshold) return;
  const time = new Date().toISOString();
  let line: string;
  if (json) {
    const out: Fields = { time, level, msg };
    for (const [k, v] of Object.entries(fields)) out[k] = v instanceof Error ? v.message : v;
    line = JSON.stringify(out);
  } else {
    line = `${time} ${level.padEnd(5)} ${msg}`;
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) line += ` ${k}=${text(v)}`;
  }
  (RANK[level] <= RANK.warn ? process.stderr : process.stdout).write(`${line}\n`);
}

export const log = {
  error: (msg: string, fields?: Fields) => write("error", msg, fields),
  warn: (msg: string, fields?: Fields) => write("warn", msg, fields),
  info: (msg: string, fields?: Fields) => write("info", msg, fields),
  debug: (msg: string, fields?: Fields) => write("debug", msg, fields),
};

/**
 * For what goes on and should be said at once, then at most once every `everyMs` while it lasts
 * (a full disk, a failing or slow batch): `due()` says whether to write now.
 */
export class Throttle {
  private at = 0;

  constructor(private readonly everyMs = 60_000) {}

  due(now = Date.now()): boolean {
    if (this.at !== 0 && now - this.at < this.everyMs) return false;
    this.at = now;
    return true;
  }

  /** It ended: the next occurrence is said at once. */
  reset(): void {
    this.at = 0;
  }
}
