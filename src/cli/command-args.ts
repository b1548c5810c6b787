// How the commands that take a data directory or a filter read their arguments: known flags only,
// --data/--config/RELAY_DATA resolved like `relay serve` does, and the --filter/--since/--until
// readers. A mistake is a UsageError (exit status 2).
import { loadConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import type { Filter } from "../nostr/filter.ts";
import { parseFilter } from "../nostr/filter.ts";
import { isReject } from "../wire/reasons.ts";
import { parseArgs, UsageError } from "./args.ts";

export interface CommandArgs {
  positional: string[];
  flags: Record<string, string>;
  config: Config;
}

/**
 * Reads argv: `booleans` are flags without a value, `options` flags with one; --data and
 * --config are always accepted and resolved through loadConfig like `relay serve` does.
 */
export function commandArgs(
  argv: readonly string[],
  spec: { booleans?: readonly string[]; options?: readonly string[]; positional: number },
): CommandArgs {
  const known = new Set([...(spec.booleans ?? []), ...(spec.options ?? []), "data", "config"]);
  // Unknown options first, so `--bogus` is called unknown rather than "needs a value".
  for (let i = 0; i < argv.length && argv[i] !== "--"; i++) {
    const a = argv[i]!;
    if (!a.startsWith("--")) continue;
    const name = a.slice(2).split("=")[0]!;
    if (!known.has(name)) throw new UsageError(`unknown option --${name}`);
    if (!a.includes("=") && !spec.booleans?.includes(name)) i++;
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(argv, spec.booleans ?? []);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { positional, flags } = parsed;
  for (const b of spec.booleans ?? [])
    if (flags[b] !== undefined && flags[b] !== "true") throw new UsageError(`--${b} takes no value`);
  const stray = positional.find((p) => p.startsWith("-") && p !== "-");
  if (stray !== undefined) throw new UsageError(`unknown option ${stray}`);
  if (positional.length > spec.positional)
    throw new UsageError(`unexpected argument '${positional[spec.positional]}'`);
  const config = loadConfig({
    file: flags.config,
    env: process.env,
    flags: flags.data === undefined ? {} : { data: flags.data },
  });
  return { positional, flags, config };
}

/** A time: unix seconds, or an ISO 8601 date/time (`2024-05-01`, `2024-05-01T12:00:00Z`). */
export function parseTime(value: string, name: string): number {
  if (/^\d+$/.test(value)) {
    const n = Number(value);
    if (Number.isSafeInteger(n)) return n;
  } else if (/^\d{4}-\d{2}-\d{2}/.test(value)) {
    const ms = Date.parse(value);
    if (!Number.isNaN(ms) && ms >= 0) return Math.floor(ms / 1000);
  }
  throw new UsageError(`--${name} must be unix seconds or an ISO 8601 date, got '${value}'`);
}

/**
 * --filter JSON (one NIP-01 filter, checked like a REQ's) narrowed by --since/--until. `limit`
 * and `search` are refused: these commands act on every match, not on the newest N.
 */
export function filterFromFlags(flags: Record<string, string>): Filter {
  let f: Filter = {};
  if (flags.filter !== undefined) {
    let raw: unknown;
    try {
      raw = JSON.parse(flags.filter);
    } catch (e) {
      throw new UsageError(`--filter is not JSON: ${(e as Error).message}`);
    }
    const parsed = parseFilter(raw, { maxFilterValues: Number.MAX_SAFE_INTEGER });
    if (isReject(parsed)) throw new UsageError(`--filter: ${parsed.message}`);
    if (parsed.limit !== undefined) throw new UsageError("--filter: limit is not supported here");
    if (parsed.search !== undefined) throw new UsageError("--filter: search is not supported here");
    f = parsed;
  }
  if (flags.since !== undefined) {
    const t = parseTime(flags.since, "since");
    f.since = Math.max(f.since ?? 0, t);
  }
  if (flags.until !== undefined) {
    const t = parseTime(flags.until, "until");
    f.until = Math.min(f.until ?? Number.MAX_SAFE_INTEGER, t);
  }
  return f;
}
