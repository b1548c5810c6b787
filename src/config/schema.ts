// The configuration, declared once. Every key's type, default, one-line doc and whether it can
// change while running come from this table; the Config type, validation, env/flag names, the
// sample file, docs and the NIP-11 `limitation` object are all derived from it.
import type { RetentionRule } from "./retention.ts";

type Kind = "string" | "int" | "number" | "bool" | "string[]" | "int[]" | "table" | "table[]" | "rules";
interface Entry<K extends Kind, V> {
  type: K;
  default: V;
  doc: string;
  /** true: may change on reload; false: needs a restart */
  live: boolean;
  /** extra environment variable and flag names operators expect (`RELAY_PORT`, `--port`) */
  env?: string;
  flag?: string;
  min?: number;
  max?: number;
  /** the only values a string may take (its type is their union) */
  values?: readonly string[];
}
type AnyEntry =
  | Entry<"string", string>
  | Entry<"int", number>
  | Entry<"number", number>
  | Entry<"bool", boolean>
  | Entry<"string[]", string[]>
  | Entry<"int[]", number[]>
  | Entry<"table", Record<string, string>>
  | Entry<"table[]", Record<string, string[]>>
  | Entry<"rules", RetentionRule[]>;

const s = (d: string, doc: string, live: boolean, extra: Partial<Entry<"string", string>> = {}) =>
  ({ type: "string", default: d, doc, live, ...extra }) as const;
const i = (d: number, doc: string, live: boolean, extra: Partial<Entry<"int", number>> = {}) =>
  ({ type: "int", default: d, doc, live, min: 0, ...extra }) as const;
/** a number that may have a fraction (0.5 GiB) */
const n = (d: number, doc: string, live: boolean, extra: Partial<Entry<"number", number>> = {}) =>
  ({ type: "number", default: d, doc, live, min: 0, ...extra }) as const;
const b = (d: boolean, doc: string, live: boolean) => ({ type: "bool", default: d, doc, live }) as const;
/** a string that is one of `values` */
const oneOf = <const V extends readonly string[]>(d: V[number], values: V, doc: string, live: boolean) =>
  ({ type: "string", default: d, doc, live, values }) as const;
const sa = (d: string[], doc: string, live: boolean) =>
  ({ type: "string[]", default: d, doc, live }) as const;
const ia = (d: number[], doc: string, live: boolean) => ({ type: "int[]", default: d, doc, live }) as const;

export const SCHEMA = {
  host: s("127.0.0.1", "address to listen on", false, { env: "RELAY_HOST", flag: "host" }),
  port: i(7777, "TCP port for WebSocket and HTTP (0 picks a free port)", false, {
    env: "RELAY_PORT",
    flag: "port",
    max: 65535,
  }),
  data: s("./data", "directory of the LMDB environment", false, { env: "RELAY_DATA", flag: "data" }),
  publicUrl: s("", "public wss:// URL of this relay, accepted in NIP-42 and NIP-62 relay tags", true),
  "server.drainSeconds": i(
    300,
    "after handing over to a successor (serve --takeover), serve the open connections this long before closing them",
    true,
  ),
  "server.pidFile": s(
    "",
    "write the serving process's pid here (a supervisor follows it across upgrades)",
    false,
  ),

  "info.name": s("bunstr relay", "relay name shown in NIP-11", true),
  "info.description": s("A Nostr relay on Bun and LMDB", "relay description shown in NIP-11", true),
  "info.pubkey": s("", "hex pubkey of the operator (NIP-11)", true),
  "info.contact": s("", "operator contact URI (NIP-11)", true),
  "info.icon": s("", "URL of an icon for the relay (NIP-11)", true),

  "limits.maxMessageBytes": i(131072, "largest client frame accepted, in bytes", false, { min: 1024 }),
  "limits.maxSubscriptions": i(50, "open subscriptions allowed per connection", true, { min: 1 }),
  "limits.maxFilters": i(10, "filters allowed in one REQ or COUNT", true, { min: 1 }),
  "limits.maxFilterValues": i(1000, "values allowed in one filter array (ids, authors, kinds, #x)", true, {
    min: 1,
  }),
  "limits.maxLimit": i(5000, "largest `limit` honoured; larger ones are clamped", true, { min: 1 }),
  "limits.defaultLimit": i(500, "limit applied to filters that give none", true, { min: 1 }),
  "limits.maxSubidLength": i(64, "longest subscription id, in characters", true, { min: 1 }),
  "limits.maxEventTags": i(2000, "most tags one event may carry", true),
  "limits.maxTagValues": i(100, "most strings in one tag", true, { min: 1 }),
  "limits.maxContentLength": i(102400, "longest event content, in characters", true),
  "limits.createdAtFutureSeconds": i(900, "refuse events dated more than this far in the future", true),
  "limits.createdAtPastSeconds": i(0, "refuse events older than this many seconds (0 = no limit)", true),
  "limits.idleTimeoutSeconds": i(120, "close connections silent this long (pings are sent before)", false, {
    min: 0,
    max: 960,
  }),
  "limits.maxOutboundBytes": i(16777216, "outbound bytes queued per connection before it is closed", false, {
    min: 65536,
  }),

  "verify.threads": i(-1, "signature verification threads (-1 = one per spare core, 0 = in-thread)", false, {
    min: -1,
  }),
  "verify.backend": oneOf(
    "auto",
    ["auto", "native", "noble"],
    "signature backend: auto (libsecp256k1 if found, else noble), native or noble",
    false,
  ),
  "verify.libraryPath": s("", "path of libsecp256k1 to try first", false),
  "verify.batchSize": i(64, "events per verification batch", false, { min: 1 }),
  "writer.maxBatch": i(2048, "most events committed in one write transaction", false, { min: 1 }),
  "writer.maxPending": i(
    8192,
    "EVENTs read from the sockets and not yet answered, at most: past it the relay stops reading from connections that send more until half of them are answered",
    false,
    { min: 1 },
  ),
  "writer.maxPendingMb": i(16, "their bytes, at most, in MiB", false, { min: 1 }),
  "store.mapSizeGb": i(
    0,
    "LMDB memory map reserved for each environment at start, in GiB (address space, not memory or disk); 0 sizes it from the address space the machine offers, up to 1024, and says so at start-up; lmdb-js maps a larger one when the data outgrows it",
    false,
  ),
  "store.releasePagesSeconds": i(
    10,
    "every this many seconds, and once a burst of writes is over, unmap the data files' pages from the relay's memory; they stay in the kernel's page cache (0 = never)",
    false,
    { min: 0 },
  ),
  "store.maxDiskGb": n(
    0,
    "disk budget in GiB (0 = none): the pages in use in data.mdb and derived/data.mdb (file pages less LMDB's free pages); near it the oldest evictable events are removed, in step with what arrives, until the data is under store.lowWaterPercent of it (or less where the files need it: they are kept within the budget x 1.25 + 16 MiB, docs/operations.md), and while nothing can be evicted events are refused with 'error: storage full'",
    true,
  ),
  "store.lowWaterPercent": i(
    90,
    "eviction for the disk budget stops once the data is under this percentage of it",
    true,
    {
      min: 1,
      max: 99,
    },
  ),
  "store.evictFirstKinds": ia(
    [],
    "kinds the disk budget evicts first, in this order (each oldest first), before every other kind (oldest first)",
    true,
  ),
  "store.pinKinds": ia(
    [],
    "kinds the disk budget never evicts (kinds 0, 3 and 10002, an author's newest profile, follows and relays, never are)",
    true,
  ),
  "store.pinAuthors": sa([], "pubkeys (hex or npub) whose events the disk budget never evicts", true),
  "consumers.intervalMs": i(
    250,
    "derived indexes (REQ indexes, search, NIP-45 counts, API counters) apply new events at least this often",
    false,
    {
      min: 10,
    },
  ),
  "consumers.idleMs": i(
    20,
    "derived indexes also apply new events once writes pause this long (0 = only on the interval)",
    false,
    { min: 0 },
  ),
  "consumers.maxBatch": i(
    20000,
    "derived indexes apply new events as soon as they weigh this much (an event counts one, plus one per tag)",
    false,
    { min: 1 },
  ),
  "consumers.maxBacklog": i(
    20000,
    "events committed and not yet in the derived indexes, at most: past it the writer waits for them and ingest stops reading EVENTs from the sockets (0 = no bound)",
    false,
  ),
  "consumers.maxBacklogMb": i(32, "stored bytes of those events, at most, in MiB (0 = no bound)", false),
  "consumers.thread": b(true, "derived indexes apply new events on a thread of their own", false),
  "query.yieldEvery": i(512, "index entries scanned before a query yields to other connections", false, {
    min: 16,
  }),
  "query.turnBudgetUs": i(
    100,
    "while EVENTs are being written, main-thread time stored reads (REQ, COUNT) may take in one turn of the event loop; reads past it start in the next turn, so a commit, its live fanout and its OK wait for at most one read (0 = no budget)",
    false,
    { min: 0 },
  ),
  "query.readers": i(
    -1,
    "threads that answer the stored part of REQs (index walks and body reads), off the thread that serves the sockets (0 = that thread answers them; -1 = one per core past two, at most 4)",
    false,
    { min: -1, max: 64 },
  ),
  "query.readerTimeoutMs": i(
    30000,
    "a reader thread that has not answered a REQ within this long is ended and replaced; its REQs get CLOSED error",
    false,
    { min: 100 },
  ),
  "negentropy.maxItems": i(
    500000,
    "most events one NIP-77 session may reconcile (more: NEG-ERR blocked)",
    true,
    {
      min: 0,
    },
  ),
  "negentropy.maxSessions": i(4, "open NIP-77 sessions allowed per connection", true, { min: 1 }),
  "negentropy.timeoutSeconds": i(60, "a NIP-77 session idle this long is closed (NEG-ERR closed)", true, {
    min: 1,
  }),
  "negentropy.frameSizeLimit": i(
    60000,
    "largest negentropy message the relay sends, in bytes before hex",
    true,
    {
      min: 4096,
    },
  ),
  "auth.writes": b(false, "require NIP-42 AUTH before accepting events", true),
  "auth.reads": b(false, "require NIP-42 AUTH before answering REQ and COUNT", true),
  "auth.restrictedKinds": ia(
    [4, 1059],
    "kinds delivered only to their authenticated author or p-tagged recipient",
    true,
  ),
  "expiration.purgeIntervalSeconds": i(60, "how often expired events (NIP-40) are purged", false, { min: 1 }),
  "retention.rules": {
    type: "rules",
    default: [] as RetentionRule[],
    doc: "NIP-11 retention rules, advertised as written: a list of {kinds?, time?, count?} (kinds as numbers or [from, to] ranges; time in seconds; count per rule's kinds together; 0 = not kept). The first rule whose kinds include an event's kind governs it; a rule without kinds, every kind. Empty = keep everything",
    live: true,
  },
  "retention.intervalSeconds": i(
    10,
    "how often events past the retention rules are looked for and removed",
    false,
    { min: 1 },
  ),
  "pow.minDifficulty": i(0, "minimum NIP-13 proof of work (leading zero bits of the id); 0 = none", true, {
    max: 256,
  }),
  "policy.pubkeyAllow": sa([], "if not empty, only these hex pubkeys may publish", true),
  "policy.pubkeyDeny": sa([], "hex pubkeys that may not publish", true),
  "policy.kindAllow": ia([], "if not empty, only these kinds are accepted", true),
  "policy.kindDeny": ia([], "kinds that are refused", true),
  "policy.plugin": s("", "command of a strfry-compatible write-policy plugin (empty = none)", true),
  "policy.pluginTimeoutMs": i(2000, "how long to wait for the plugin's answer", true, { min: 1 }),
  "policy.pluginFailOpen": b(false, "accept events when the plugin hangs or dies (default: refuse)", true),
  "management.admins": sa(
    [],
    "pubkeys (hex or npub) that may call the NIP-86 management API over HTTP (empty = API off)",
    true,
  ),
  "rate.eventsPerSecond": i(0, "EVENTs per second per connection (0 = unlimited)", true),
  "rate.eventsPerSecondPerIp": i(0, "EVENTs per second per IP address (0 = unlimited)", true),
  "rate.reqsPerSecond": i(0, "REQs per second per connection (0 = unlimited)", true),
  "rate.reqsPerSecondPerIp": i(0, "REQs per second per IP address (0 = unlimited)", true),
  "rate.countsPerSecond": i(0, "COUNTs per second per connection (0 = unlimited)", true),
  "rate.countsPerSecondPerIp": i(0, "COUNTs per second per IP address (0 = unlimited)", true),
  "rate.burstSeconds": i(2, "bucket size, in seconds of the rate, a client may spend at once", true, {
    min: 1,
  }),
  "rate.maxConnectionsPerIp": i(0, "open connections allowed per IP address (0 = unlimited)", true),
  "rate.closeAfterRefusals": i(100, "close a connection after this many rate-limited frames in a row", true, {
    min: 1,
  }),
  "rate.exemptIps": sa([], "IP addresses and CIDR ranges never rate limited", true),
  "rate.exemptPubkeys": sa([], "authenticated pubkeys never rate limited", true),
  "search.enabled": b(true, "NIP-50 search: keep the token index and answer `search` filters", false),
  "api.enabled": b(true, "HTTP API under /v0 and /v1 (docs/api.md) and the counters it reads", false),
  "api.maxLimit": i(100, "largest `limit` an API request gets; larger ones are clamped", true, { min: 1 }),
  "api.maxAgeSeconds": i(10, "Cache-Control max-age of API answers, in seconds", true),
  "api.trendingWindowSeconds": i(86400, "notes this recent are ranked by /v0/trending/notes", false, {
    min: 60,
  }),
  "count.registers": b(
    true,
    "NIP-45: keep follower, reaction, reply, repost, quote and comment counts with their HyperLogLog registers as events commit, so such a COUNT is one read (off: it counts the tag index, and ingest costs less)",
    false,
  ),
  "online.probe": b(
    false,
    "probe the relays named in stored NIP-65 lists for /v1/online (outbound HTTP)",
    false,
  ),
  "online.windowSeconds": i(3600, "a relay is online if a probe got an answer this recently", true, {
    min: 1,
  }),
  "online.intervalSeconds": i(900, "probe each relay at most once per this many seconds", false, { min: 1 }),
  "online.concurrency": i(4, "probes in flight at once", false, { min: 1, max: 256 }),
  "online.ratePerSecond": i(2, "probes started per second at most", false, { min: 1, max: 100 }),
  "online.timeoutMs": i(5000, "a probe without an answer this long counts as unreachable", false, {
    min: 100,
  }),
  "online.allowPrivate": b(false, "also probe loopback, private and link-local addresses", false),
  "process.allocatorPurgeMs": i(
    1000,
    "return memory the allocator freed to the OS after this many ms (-1 = keep it for reuse; sets MIMALLOC_PURGE_DELAY)",
    false,
    { min: -1 },
  ),
  "process.gcRamMb": i(
    256,
    "memory JavaScriptCore sizes its heaps' growth for, in MiB (0 = what the machine or its memory cgroup has; sets BUN_JSC_forceRAMSize): less collects sooner, for more CPU",
    false,
    { min: 0 },
  ),
  "metrics.enabled": b(true, "serve Prometheus metrics over HTTP", true),
  "metrics.path": s("/metrics", "path of the metrics endpoint", true),
  "metrics.port": i(
    0,
    "serve metrics on their own listener at this port instead of the relay's (0 = same port)",
    false,
    {
      max: 65535,
    },
  ),
  "metrics.host": s("127.0.0.1", "address of the separate metrics listener (with metrics.port)", false),
  "nip05.names": {
    type: "table",
    default: {} as Record<string, string>,
    doc: "NIP-05 names served at /.well-known/nostr.json: name = hex pubkey",
    live: true,
  },
  "nip05.relays": {
    type: "table[]",
    default: {} as Record<string, string[]>,
    doc: "NIP-05 relay hints: hex pubkey = list of relay URLs",
    live: true,
  },
  "log.level": oneOf(
    "info",
    ["error", "warn", "info", "debug"],
    "least severe log lines written: error, warn, info or debug",
    true,
  ),
  "log.format": oneOf(
    "text",
    ["text", "json"],
    "log lines as text or json (one object per line: time, level, msg, fields)",
    true,
  ),
  "log.summarySeconds": i(60, "refused frames and connections are summarised at info this often", false, {
    min: 1,
  }),
  "http.cors": b(true, "send CORS headers on HTTP answers", true),
  "http.realIpHeader": s(
    "",
    "header a reverse proxy puts the client's address in (X-Forwarded-For, X-Real-IP); empty = the TCP peer",
    true,
  ),
  "http.trustedProxies": sa(
    ["127.0.0.0/8", "::1"],
    "peers whose realIpHeader is believed: IP addresses and CIDR ranges, IPv4 or IPv6",
    true,
  ),
  "cluster.natsUrl": s(
    "",
    "NATS server(s) of a JetStream cluster this node joins, comma-separated (empty = single node; docs/cluster.md)",
    false,
  ),
  "cluster.stream": s("NOSTR_EVENTS", "JetStream stream that carries the nodes' events", false),
  "cluster.nodeId": s(
    "",
    "this node's name in the cluster and its durable consumer's (empty = host name and port)",
    false,
  ),
  "cluster.okAfter": oneOf(
    "local",
    ["local", "stream"],
    "`OK true` after the local commit (local) or only once the stream has the event too (stream)",
    false,
  ),
  "cluster.duplicateWindowSeconds": i(
    120,
    "a stream created by this node drops a second copy of an event id within this window",
    false,
    { min: 1 },
  ),
  "cluster.maxAgeHours": i(
    168,
    "a stream created by this node keeps events this long (0 = forever); a node down longer repairs with relay sync",
    false,
  ),
  "nip11.extraNips": sa([], "further NIP numbers to advertise (as strings)", true),
} as const satisfies Record<string, AnyEntry>;

export type Key = keyof typeof SCHEMA;
type ValueOf<E> = E extends { default: infer V }
  ? V extends readonly string[]
    ? string[]
    : V extends readonly number[]
      ? number[]
      : V
  : never;
type Widen<V> = V extends string ? string : V extends number ? number : V extends boolean ? boolean : V;
/** A key's type: the union of its values where the schema lists them, else its default's type. */
type TypeOf<E> = E extends { values: readonly (infer U)[] } ? U : Widen<ValueOf<E>>;
export type Config = { readonly [K in Key]: TypeOf<(typeof SCHEMA)[K]> };

export const entries = (): [Key, AnyEntry][] => Object.entries(SCHEMA) as [Key, AnyEntry][];

/** RELAY_LIMITS_MAX_LIMIT for limits.maxLimit; plus the operator aliases. */
export function envNames(key: Key): string[] {
  const e = SCHEMA[key] as AnyEntry;
  const generated = `RELAY_${key
    .replace(/\./g, "_")
    .replace(/([a-z])([A-Z])/g, "$1_$2")
    .toUpperCase()}`;
  return e.env && e.env !== generated ? [e.env, generated] : [generated];
}
