// `relay import [FILE|-]`: loads JSONL events (strfry, nostream and `relay export` write it) through
// the same checks (`admit`) and the same Writer as live EVENTs, streamed line by line and handed to
// the writer in chunks so it commits them in large batches.

import { createReadStream, statSync } from "node:fs";
import type { Config } from "../../config/schema.ts";
import { storedJson } from "../../nostr/canonical.ts";
import { isEphemeral } from "../../nostr/kinds.ts";
import type { WriteOutcome } from "../../store/batch.ts";
import { isReject, reasonText } from "../../wire/reasons.ts";
import { UsageError } from "../args.ts";
import { commandArgs } from "../command-args.ts";
import { fmtBytes, fmtInt, guarded, IoError } from "../output.ts";
import type { LocalWriter } from "./local-writer.ts";
import { openLocalWriter } from "./local-writer.ts";
import { Progress, progressEvery } from "./progress.ts";

export const help = `relay import [FILE|-] [--no-verify] [--json] [--quiet] [--progress-every S] [--data DIR] [--config FILE]

Reads events as JSONL, one event object per line (what 'strfry export', nostream's export and
'relay export' write), from FILE or, without FILE or with '-', from standard input. Each line
gets the checks a live EVENT gets (shape, size limits, id, signature) and goes through the same
writer (duplicates, replaceable and addressable rules, deletion requests) in large batches.
Old events are welcome: the createdAtPastSeconds limit does not apply to imports (the future
limit does). Ephemeral kinds (20000-29999) and expired events (NIP-40) are counted and skipped,
as the relay would not keep them. The write policy of live connections (allow and deny lists,
proof of work, AUTH, plugin, rate limits) does not apply: whoever runs the import is trusted.

  --no-verify   skip signature checks (ids are still checked): for trusted dumps, much faster
  --json        print the summary as one JSON object
  --quiet       no progress lines
  --progress-every S   seconds between progress lines when not on a terminal (default 5)

Progress goes to stderr (a bar with rate and ETA on a terminal, a line every 5 s otherwise,
with how many events are accepted and on disk so far: a killed import keeps at least those);
the summary to stdout: accepted, duplicate, older (a newer version of the replaceable event is
stored), replaced (accepted, removing an older stored version), refused (deleted or vanished
earlier), ephemeral, invalid, and the first 20 problem lines by number. A bad line never stops
the import. Exit status: 0 when the whole input was read (even with invalid lines), 1 on an I/O
or storage error, 2 on bad arguments, 130 when interrupted (what was committed stays).

Safe while 'relay serve' runs on the same data directory: the relay serves the imported
events (REQ, search, live subscriptions) within a second of their commit.`;

/** Problem lines listed in the summary (all are counted). */
const SHOW = 20;
/** admit's reason for an event whose NIP-40 expiration has passed. */
const EXPIRED = "this event has expired";
/** Longest line read; a longer one is skipped as invalid instead of exhausting memory. */
const MAX_LINE = 16 << 20;

export interface Problem {
  line: number;
  reason: string;
}

/** What `relay import` reports (`--json` prints it). */
export interface Summary {
  source: string;
  lines: number;
  bytes: number;
  seconds: number;
  accepted: number;
  duplicate: number;
  older: number;
  replaced: number;
  refused: number;
  ephemeral: number;
  expired: number;
  invalid: number;
  blank: number;
  errors: number;
  problems: Problem[];
  interrupted: boolean;
}

/**
 * Lines of the input as strings (without \n or \r\n); null for a line over MAX_LINE bytes.
 * `onBytes` hears the size of each line taken (newline included), for progress by position.
 */
async function* readLines(
  input: AsyncIterable<Uint8Array>,
  onBytes: (n: number) => void,
): AsyncGenerator<string | null> {
  let parts: Buffer[] = [];
  let partLen = 0;
  let skipped = 0; // bytes of an over-long line dropped so far; > 0 means "skipping to its end"
  const take = (tail: Buffer, newline: number): string | null => {
    if (skipped > 0) {
      onBytes(skipped + tail.length + newline);
      skipped = 0;
      return null;
    }
    const whole = partLen === 0 ? tail : Buffer.concat([...parts, tail], partLen + tail.length);
    parts = [];
    partLen = 0;
    onBytes(whole.length + newline);
    const end = whole.length > 0 && whole[whole.length - 1] === 13 ? whole.length - 1 : whole.length;
    return whole.toString("utf8", 0, end);
  };
  for await (const chunk of input) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    let at = 0;
    for (;;) {
      const nl = buf.indexOf(10, at);
      if (nl === -1) break;
      yield take(buf.subarray(at, nl), 1);
      at = nl + 1;
    }
    if (at === buf.length) continue;
    if (skipped > 0) skipped += buf.length - at;
    else {
      // Copied: the stream may reuse its chunk buffers.
      parts.push(Buffer.from(buf.subarray(at)));
      partLen += buf.length - at;
      if (partLen > MAX_LINE) {
        skipped = partLen;
        parts = [];
        partLen = 0;
      }
    }
  }
  if (partLen > 0 || skipped > 0) yield take(Buffer.alloc(0), 0);
}

function openInput(file: string): { input: AsyncIterable<Uint8Array>; size?: number; source: string } {
  if (file === "-") return { input: process.stdin as AsyncIterable<Uint8Array>, source: "standard input" };
  let size: number;
  try {
    const st = statSync(file);
    if (st.isDirectory()) throw new Error("is a directory");
    size = st.size;
  } catch (e) {
    throw new IoError(`cannot read ${file}: ${(e as Error).message}`);
  }
  return { input: createReadStream(file, { highWaterMark: 1 << 20 }), size, source: file };
}

export async function run(argv: string[]): Promise<number> {
  return guarded("import", async () => {
    const { positional, flags, config } = commandArgs(argv, {
      booleans: ["no-verify", "json", "quiet"],
      options: ["progress-every"],
      positional: 1,
    });
    if (positional[0] === undefined && process.stdin.isTTY)
      throw new UsageError("give FILE, or '-' to read standard input (it is a terminal)");
    const { input, size, source } = openInput(positional[0] ?? "-");
    const local = openLocalWriter(config, "import");
    try {
      return await load(config, flags, local, input, size, source);
    } finally {
      await local.close();
    }
  });
}

async function load(
  config: Config,
  flags: Record<string, string>,
  local: LocalWriter,
  input: AsyncIterable<Uint8Array>,
  size: number | undefined,
  source: string,
): Promise<number> {
  // The same writer as the server's (local-writer.ts): duplicates, replaceable rules, NIP-09
  // deletions, NIP-62 requests that name this relay, and the bans made through NIP-86.
  const writer = local.writer;
  const noVerify = flags["no-verify"] !== undefined;
  const sum: Summary = {
    source,
    lines: 0,
    bytes: 0,
    seconds: 0,
    accepted: 0,
    duplicate: 0,
    older: 0,
    replaced: 0,
    refused: 0,
    ephemeral: 0,
    expired: 0,
    invalid: 0,
    blank: 0,
    errors: 0,
    problems: [],
    interrupted: false,
  };
  const invalidShown: Problem[] = [];
  const storeShown: Problem[] = [];
  const note = (list: Problem[], line: number, reason: string) => {
    if (list.length < SHOW) list.push({ line, reason });
  };
  const tally = (o: WriteOutcome, line: number) => {
    switch (o.status) {
      case "stored":
        sum.accepted++;
        if ("replaced" in o && o.replaced === true) sum.replaced++;
        return;
      case "duplicate":
        sum.duplicate++;
        return;
      case "rejected":
        if (o.reject.prefix === "duplicate") sum.older++;
        else if (o.reject.prefix === "error") {
          sum.errors++;
          note(storeShown, line, reasonText(o.reject));
        } else {
          sum.refused++;
          note(storeShown, line, reasonText(o.reject));
        }
    }
  };

  const progress = new Progress("import", {
    ...(size === undefined ? {} : { totalBytes: size }),
    quiet: flags.quiet !== undefined,
    every: progressEvery(flags),
  });
  // First Ctrl-C: stop reading, commit what was handed over, print the summary. Second: leave.
  const interrupt = () => {
    if (sum.interrupted) process.exit(130);
    sum.interrupted = true;
  };
  process.on("SIGINT", interrupt);
  process.on("SIGTERM", interrupt);
  // Two chunks in flight: the writer commits one while the next is read and checked.
  const chunk = Math.max(1, config["writer.maxBatch"]);
  let pending: Promise<void>[] = [];
  let inFlight: Promise<unknown> = Promise.resolve();
  let readError: Error | undefined;
  try {
    for await (const text of readLines(input, (n) => {
      sum.bytes += n;
    })) {
      if (sum.interrupted) break;
      const line = ++sum.lines;
      // `accepted` counts only outcomes heard after their batch was flushed: on disk.
      progress.update(sum.bytes, line, () => `${fmtInt(sum.accepted)} accepted on disk`);
      if (text === null) {
        sum.invalid++;
        note(invalidShown, line, `invalid: line longer than ${fmtBytes(MAX_LINE)}`);
        continue;
      }
      if (text.trim() === "") {
        sum.blank++;
        continue;
      }
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch (e) {
        sum.invalid++;
        note(invalidShown, line, `invalid: not JSON (${(e as Error).message})`);
        continue;
      }
      const e = local.check(raw, noVerify);
      if (isReject(e)) {
        // Refused like a live EVENT, but not a defect of the file: it would be purged at once.
        if (e.message === EXPIRED) {
          sum.expired++;
          continue;
        }
        sum.invalid++;
        note(invalidShown, line, reasonText(e));
        continue;
      }
      if (isEphemeral(e.kind)) {
        sum.ephemeral++;
        continue;
      }
      pending.push(writer.submit(e, storedJson(e)).then((o) => tally(o, line)));
      if (pending.length >= chunk) {
        const prev = inFlight;
        inFlight = Promise.all(pending);
        pending = [];
        await prev;
      }
    }
  } catch (e) {
    readError = e as Error;
  }
  await Promise.all([inFlight, ...pending]);
  await writer.drain();
  process.off("SIGINT", interrupt);
  process.off("SIGTERM", interrupt);
  progress.done();
  sum.seconds = progress.elapsed;
  sum.problems = [...invalidShown, ...storeShown].sort((a, b) => a.line - b.line).slice(0, SHOW);
  print(sum, flags.json !== undefined);
  if (readError) throw new IoError(`reading ${source} failed after line ${sum.lines}: ${readError.message}`);
  if (sum.errors > 0) return 1;
  if (sum.interrupted) return 130;
  return 0;
}

function print(s: Summary, json: boolean): void {
  if (json) {
    console.log(JSON.stringify(s));
    return;
  }
  const rate = s.seconds > 0 ? Math.round(s.lines / s.seconds) : 0;
  const rows: [string, number, string][] = [
    ["accepted", s.accepted, ""],
    ["duplicate", s.duplicate, "already stored"],
    ["older", s.older, "a newer version of the replaceable event is stored"],
    ["replaced", s.replaced, "accepted, removing an older stored version"],
    ["refused", s.refused, "deleted or vanished earlier (NIP-09, NIP-62)"],
    ["ephemeral", s.ephemeral, "kinds 20000-29999 are not stored"],
    ["expired", s.expired, "NIP-40 expiration already passed"],
    ["invalid", s.invalid, ""],
    ["blank", s.blank, "empty lines"],
  ];
  if (s.errors > 0) rows.push(["errors", s.errors, "could not be stored"]);
  const out = [
    `${s.interrupted ? "interrupted after" : "read"} ${fmtInt(s.lines)} lines (${fmtBytes(s.bytes)}) from ${s.source} in ${s.seconds.toFixed(2)} s, ${fmtInt(rate)} lines/s`,
    ...rows.map(
      ([k, v, why]) => `  ${k.padEnd(10)} ${String(v).padStart(9)}${why && v > 0 ? `  ${why}` : ""}`,
    ),
  ];
  const more = s.invalid + s.refused + s.errors - s.problems.length;
  for (const p of s.problems) out.push(`  line ${p.line}: ${p.reason}`);
  if (more > 0) out.push(`  ... and ${fmtInt(more)} more`);
  console.log(out.join("\n"));
}
