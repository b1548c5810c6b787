// Command-line flags of bench/run.ts and their defaults. Sizes depend on the mode: a full run
// (50k events) against --url, a quick one (~5k) with --quick and for the in-process default run,
// a scale run (a million events by 20,000 authors) with --scale.
import { parseArgs } from "node:util";
import { COUNT_TYPES, type CountType } from "./count.ts";

export const PHASES = ["ingest", "query", "count", "search", "live", "mixed"] as const;
export type Phase = (typeof PHASES)[number];
/** run when --phases is not given; `mixed` only when asked for */
const DEFAULT_PHASES: readonly Phase[] = ["ingest", "query", "count", "search", "live"];

export interface BenchArgs {
  /** relay to load; undefined: start one in-process on a temp dir */
  url: string | undefined;
  events: number;
  authors: number;
  seed: number;
  connections: number;
  window: number;
  queries: number;
  inflight: number;
  counts: number;
  /** the count phase's filter shapes (default all) */
  countTypes: CountType[];
  searches: number;
  subscribers: number;
  liveEvents: number;
  liveRate: number;
  /** the mixed phase: events per second published to the live subscribers, and for how long */
  mixedRate: number;
  mixedSeconds: number;
  pid: number | undefined;
  json: string | undefined;
  phases: Phase[];
  timeoutMs: number;
  micro: boolean;
  e2e: boolean;
  filter: RegExp | undefined;
  /** after the ingest, wait for the relay's derived indexes to catch up (its /metrics lag) */
  settle: boolean;
  /** idle seconds after the ingest before memory is read again (0 = none) */
  restSeconds: number;
  /** the ingest (and the catch-up after it) gives up after this long without progress */
  stallMs: number;
  /** check every search answer against the exact ranked answer (parses the whole dataset) */
  searchCheck: boolean;
  /** where to write every timed request and delivery (phase, start, latency), if anywhere */
  timeline: string | undefined;
}

export const USAGE = `usage: bun bench/run.ts [options]
  (no --url)          mitata micro-benchmarks, then a quick load run on an in-process relay
  --url ws://…        load run only, against that relay (full size unless --quick)
  --quick | --full    ~5,000 or 50,000 events (and matching query/live counts)
  --scale             1,000,000 events by 20,000 authors (--events/--authors still win)
  --events N          events to publish (default: 50000 full, 5000 quick)
  --authors N         distinct authors (default: events/20, at most 1000, up to 50,000 events;
                      beyond that events/50, at most 20,000)
  --seed N            dataset seed (default 1); datasets are signed on every core once and
                      cached in .bench-cache/ (JSONL, read as a stream)
  --connections C     publishing and querying connections (default 8)
  --window W          EVENTs in flight per publishing connection (default 100)
  --queries N         REQs in the query mix (default 4000 full, 800 quick)
  --inflight N        REQs/COUNTs in flight per query, count and search connection (default 1)
  --counts N          COUNTs in the count phase (default 4000 full, 800 quick)
  --count-types LIST  comma list of the count phase's shapes (default all): the query shapes,
                      "author notes", "reactions (hll)", "followers (hll)"
  --searches N        NIP-50 search REQs in the search phase (default 2000 full, 400 quick)
  --subscribers S     live subscriber connections (default 200)
  --live-events N     events published in the live phase (default 1000 full, 300 quick)
  --live-rate R       live events per second (default 200)
  --mixed-rate R      the mixed phase's events per second to the subscribers (default 500)
  --mixed-seconds S   how long the mixed phase publishes (default 20, 5 quick)
  --phases LIST       comma list of ingest,query,count,search,live,mixed (default all but mixed:
                      the query mix while the live subscribers get --mixed-rate events/s; run in
                      that order;
                      count and search only against a loopback --url)
  --pid PID           read the relay's RSS, PSS and CPU time from /proc/PID
  --json FILE         also write the results as JSON
  --timeout S         per-phase time limit in seconds (default 600, or events/250 if more)
  --stall S           end the ingest when no OK came for S seconds, and the catch-up after it
                      when the relay's consumer lag did not shrink for S seconds (default 60)
  --no-settle         go on at once after the ingest; by default the load tool waits until the
                      relay's /metrics says its derived indexes have caught up, and counts that
                      time and CPU into the ingest's CPU per event
  --rest S            after the ingest (and the catch-up), wait S idle seconds and read the
                      relay's memory again: what an operator sees once the load stops (default 0)
  --search-check | --no-search-check
                      compare every search answer with the exact ranked answer computed here
                      (default on up to 100,000 events: it parses the whole dataset)
  --timeline FILE     write one line per request and live delivery: phase, when it was sent
                      (Unix ms, to set beside the relay's log) and its latency in ms
  --skip-micro        no micro-benchmarks      --micro-only   only micro-benchmarks
  --filter REGEX      only micro-benchmarks whose name matches`;

const int = (v: string | undefined, name: string, min = 0): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}, got ${v}`);
  return n;
};

function isLoopback(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    throw new Error(`--url ${url} is not a URL`);
  }
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function countTypes(v: string | undefined): CountType[] {
  if (v === undefined) return [...COUNT_TYPES];
  const types = v.split(",").map((t) => t.trim());
  for (const t of types)
    if (!(COUNT_TYPES as readonly string[]).includes(t))
      throw new Error(`unknown count type ${t}; one of ${COUNT_TYPES.join(", ")}`);
  return types as CountType[];
}

/**
 * Up to the 50k full run, events/20 (at most 1000), as every published result used; beyond it
 * events/50 (at most 20,000): a million events by 20,000 authors, as a large relay sees them.
 */
const defaultAuthors = (events: number): number =>
  events <= 50_000
    ? Math.max(10, Math.min(1000, Math.floor(events / 20)))
    : Math.min(20_000, Math.max(1000, Math.floor(events / 50)));

export function parseBenchArgs(argv: string[]): BenchArgs | "help" {
  const { values: v } = parseArgs({
    args: argv,
    strict: true,
    options: {
      url: { type: "string" },
      quick: { type: "boolean" },
      full: { type: "boolean" },
      events: { type: "string" },
      authors: { type: "string" },
      seed: { type: "string" },
      connections: { type: "string" },
      window: { type: "string" },
      queries: { type: "string" },
      inflight: { type: "string" },
      counts: { type: "string" },
      "count-types": { type: "string" },
      searches: { type: "string" },
      subscribers: { type: "string" },
      "live-events": { type: "string" },
      "live-rate": { type: "string" },
      "mixed-rate": { type: "string" },
      "mixed-seconds": { type: "string" },
      phases: { type: "string" },
      pid: { type: "string" },
      json: { type: "string" },
      timeout: { type: "string" },
      "skip-micro": { type: "boolean" },
      "micro-only": { type: "boolean" },
      filter: { type: "string" },
      "no-settle": { type: "boolean" },
      rest: { type: "string" },
      scale: { type: "boolean" },
      stall: { type: "string" },
      "search-check": { type: "boolean" },
      "no-search-check": { type: "boolean" },
      timeline: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return "help";
  if (v.quick && v.full) throw new Error("--quick and --full exclude each other");
  // The in-process run shares this process's CPU with the relay, so it stays small by default.
  const quick = v.quick || (!v.full && v.url === undefined);
  const events = int(v.events, "events", 1) ?? (v.scale ? 1_000_000 : quick ? 5_000 : 50_000);
  if (v["search-check"] && v["no-search-check"])
    throw new Error("--search-check and --no-search-check exclude each other");
  const phases = (v.phases ?? DEFAULT_PHASES.join(",")).split(",").filter((p) => p !== "");
  for (const p of phases)
    if (!(PHASES as readonly string[]).includes(p)) throw new Error(`unknown phase ${p}`);
  if (v.url !== undefined && !isLoopback(v.url) && phases.some((p) => p === "count" || p === "search"))
    throw new Error(
      "the count and search phases run against a loopback --url only (127.0.0.1, ::1, localhost)",
    );
  return {
    url: v.url,
    events,
    authors: int(v.authors, "authors", 1) ?? (v.scale ? 20_000 : defaultAuthors(events)),
    seed: int(v.seed, "seed") ?? 1,
    connections: int(v.connections, "connections", 1) ?? 8,
    window: int(v.window, "window", 1) ?? 100,
    queries: int(v.queries, "queries") ?? (quick ? 800 : 4000),
    inflight: int(v.inflight, "inflight", 1) ?? 1,
    counts: int(v.counts, "counts") ?? (quick ? 800 : 4000),
    countTypes: countTypes(v["count-types"]),
    searches: int(v.searches, "searches") ?? (quick ? 400 : 2000),
    subscribers: int(v.subscribers, "subscribers") ?? 200,
    liveEvents: int(v["live-events"], "live-events") ?? (quick ? 300 : 1000),
    liveRate: int(v["live-rate"], "live-rate", 1) ?? 200,
    mixedRate: int(v["mixed-rate"], "mixed-rate", 1) ?? 500,
    mixedSeconds: int(v["mixed-seconds"], "mixed-seconds", 1) ?? (quick ? 5 : 20),
    pid: int(v.pid, "pid", 1),
    json: v.json,
    phases: phases as Phase[],
    timeoutMs: (int(v.timeout, "timeout", 1) ?? Math.max(600, Math.ceil(events / 250))) * 1000,
    micro: !v["skip-micro"] && v.url === undefined,
    e2e: !v["micro-only"],
    filter: v.filter === undefined ? undefined : new RegExp(v.filter),
    settle: !v["no-settle"],
    restSeconds: int(v.rest, "rest") ?? 0,
    stallMs: (int(v.stall, "stall", 1) ?? 60) * 1000,
    searchCheck: v["search-check"] ?? (!v["no-search-check"] && events <= 100_000),
    timeline: v.timeline,
  };
}
