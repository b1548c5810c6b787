// `relay sync URL`: reconciles the local data directory with any NIP-77 relay by negentropy,
// then downloads what only the remote has (REQ by ids, in batches, each event checked and
// written as `relay import` writes) and uploads what only the local store has (EVENT, one OK
// each), with progress on stderr and a summary on stdout.

import { nip77 } from "nostr-tools";
import { collectItems } from "../../indexes/neg-items.ts";
import { storedJson } from "../../nostr/canonical.ts";
import type { Filter } from "../../nostr/filter.ts";
import { isEphemeral } from "../../nostr/kinds.ts";
import { PackedStorage, sortItems } from "../../nostr/negentropy.ts";
import { hexBytes, readU64 } from "../../store/keys.ts";
import { readEvent } from "../../store/store.ts";
import { isReject, reasonText } from "../../wire/reasons.ts";
import { UsageError } from "../args.ts";
import { commandArgs, filterFromFlags } from "../command-args.ts";
import type { LocalWriter } from "../data/local-writer.ts";
import { openLocalWriter } from "../data/local-writer.ts";
import { fmtInt, guarded, IoError } from "../output.ts";
import { secretKey } from "./nip42.ts";
import { Remote, RemoteError, wantsAuth } from "./remote.ts";
import { ConnectError, relayUrl, timeoutMs } from "./ws-client.ts";

export const help = `relay sync URL [--filter JSON] [--since T] [--until T] [--dir down|up|both]
           [--nsec-file F] [--timeout S] [--json] [--quiet] [--data DIR] [--config FILE]

Reconciles the events of the local data directory with the relay at URL (any relay speaking
NIP-77 negentropy: strfry, khatru, this one), limited to the events matching --filter (one
NIP-01 filter as JSON, default all) and --since/--until (unix seconds or ISO dates). Only ids
cross the network to find the differences; then:

  --dir down    (default) fetch the events only the remote has, by id, in batches, and store
                them with the checks 'relay import' applies (id, signature, replaceable rules)
  --dir up      send the events only the local store has to the remote, one EVENT each,
                counting its OK answers
  --dir both    both

  --nsec-file F   answer the remote's NIP-42 AUTH with this key (or RELAY_NSEC) when it asks
  --timeout S     seconds to wait for each answer of the remote (default 30)
  --json          print the summary as one JSON object
  --quiet         no progress lines

The summary: have (only here), need (only there), received (stored here), sent (accepted
there), refused (by either side, with the first reasons), skipped (already stored or an older
replaceable version). Exit status: 0 once reconciled and transferred (refusals included), 1
when the remote fails (connection, NEG-ERR such as "blocked: too many events": narrow with
--since/--until) or the data cannot be written, 2 for bad arguments.`;

/** nostr-tools' codec as the initiator, over our packed storage (it calls only its methods). */
const initiator = (s: PackedStorage): InstanceType<typeof nip77.Negentropy> =>
  new nip77.Negentropy(s as unknown as InstanceType<typeof nip77.NegentropyStorageVector>, 60_000);

/** Ids per REQ when downloading, and EVENTs awaiting their OK when uploading. */
const BATCH = 500;
const WINDOW = 100;
/** Refusal reasons listed in the summary (all are counted). */
const SHOW = 10;

export interface SyncSummary {
  url: string;
  dir: "down" | "up" | "both";
  have: number;
  need: number;
  rounds: number;
  received: number;
  sent: number;
  skipped: number;
  refused: number;
  reasons: string[];
  seconds: number;
}

export async function run(argv: string[]): Promise<number> {
  return guarded("sync", async () => {
    const { positional, flags, config } = commandArgs(argv, {
      booleans: ["json", "quiet"],
      options: ["filter", "since", "until", "dir", "nsec-file", "timeout"],
      positional: 1,
    });
    const url = relayUrl(positional[0]);
    const dir = flags.dir ?? "down";
    if (dir !== "down" && dir !== "up" && dir !== "both")
      throw new UsageError(`--dir must be down, up or both, got '${dir}'`);
    const filter = filterFromFlags(flags);
    const wait = timeoutMs(flags.timeout, 30);
    const secret =
      flags["nsec-file"] !== undefined || process.env.RELAY_NSEC ? secretKey(flags["nsec-file"]) : undefined;
    const log = flags.quiet !== undefined ? () => {} : (s: string) => console.error(s);
    let remote: Remote;
    try {
      remote = await Remote.open(url, wait, secret);
    } catch (e) {
      if (e instanceof ConnectError) throw new IoError(`${url.href}: ${e.message}`);
      throw e;
    }
    const local = openLocalWriter(config, "sync");
    const started = performance.now();
    const sum: SyncSummary = {
      url: url.href,
      dir,
      have: 0,
      need: 0,
      rounds: 0,
      received: 0,
      sent: 0,
      skipped: 0,
      refused: 0,
      reasons: [],
      seconds: 0,
    };
    try {
      const { have, need } = await reconcile(remote, local, filter, sum, log);
      log(
        `reconciled in ${sum.rounds} round trips: ${fmtInt(have.length)} only here, ${fmtInt(need.length)} only there`,
      );
      if (dir !== "up") await download(remote, local, need, sum, log);
      if (dir !== "down") await upload(remote, local, have, sum, log);
    } catch (e) {
      if (e instanceof RemoteError) throw new IoError(`${url.href}: ${e.message}`);
      throw e;
    } finally {
      remote.close();
      await local.close();
    }
    sum.seconds = (performance.now() - started) / 1000;
    print(sum, flags.json !== undefined);
    return 0;
  });
}

/** Runs one negentropy session over the local items of the filter; have/need are ids. */
async function reconcile(
  remote: Remote,
  local: LocalWriter,
  filter: Filter,
  sum: SyncSummary,
  log: (s: string) => void,
): Promise<{ have: string[]; need: string[] }> {
  const items = await collectItems(local.store, [filter], {
    hwm: Number.MAX_SAFE_INTEGER,
    yieldEvery: 1 << 20,
    maxItems: Number.MAX_SAFE_INTEGER,
  });
  if (items === undefined || items === "too-many") throw new IoError("cannot list the local events");
  const sorted = sortItems(items.times, items.ids);
  log(`local: ${fmtInt(sorted.times.length)} events match; reconciling with ${remote.url.href}`);
  const have: string[] = [];
  const need: string[] = [];
  for (let attempt = 0; ; attempt++) {
    const neg = initiator(new PackedStorage(sorted.times, sorted.ids));
    const subId = `sync-${attempt}`;
    const wire = wireFilter(filter);
    let msg: string | null = neg.initiate();
    remote.send(["NEG-OPEN", subId, wire, msg]);
    have.length = 0;
    need.length = 0;
    let retry = false;
    while (msg !== null) {
      const f = await remote.next((x) => (x[0] === "NEG-MSG" || x[0] === "NEG-ERR") && x[1] === subId);
      if (f[0] === "NEG-ERR") {
        if (attempt === 0 && wantsAuth(f[2]) && (await remote.authenticate())) {
          retry = true;
          break;
        }
        throw new RemoteError(`NEG-ERR ${String(f[2])}`);
      }
      sum.rounds++;
      msg = neg.reconcile(
        String(f[2]),
        (id) => have.push(id),
        (id) => need.push(id),
      );
      if (msg !== null) remote.send(["NEG-MSG", subId, msg]);
    }
    if (retry) continue;
    remote.send(["NEG-CLOSE", subId]);
    sum.have = have.length;
    sum.need = need.length;
    return { have, need };
  }
}

/** A parsed filter back in NIP-01 wire form (`#x` keys). */
function wireFilter(f: Filter): Record<string, unknown> {
  const { tags, ...rest } = f as Filter & { tags?: [string, string[]][] };
  const w: Record<string, unknown> = { ...rest };
  for (const [letter, values] of tags ?? []) w[`#${letter}`] = values;
  return w;
}

function refuse(sum: SyncSummary, where: string, id: string, reason: string): void {
  sum.refused++;
  if (sum.reasons.length < SHOW) sum.reasons.push(`${where} ${id}: ${reason}`);
}

/** Fetches the missing ids in batches and stores what arrives, checked like an import. */
async function download(
  remote: Remote,
  local: LocalWriter,
  need: readonly string[],
  sum: SyncSummary,
  log: (s: string) => void,
): Promise<void> {
  for (let i = 0; i < need.length; i += BATCH) {
    const ids = need.slice(i, i + BATCH);
    const wanted = new Set(ids);
    const subId = `get-${i}`;
    const writes: Promise<void>[] = [];
    const seen = new Set<string>();
    const onEvent = (f: unknown[]) => {
      if (f[0] !== "EVENT" || f[1] !== subId) return;
      const e = local.check(f[2]);
      const id = String((f[2] as { id?: unknown } | undefined)?.id ?? "?");
      if (isReject(e)) return refuse(sum, "here", id, reasonText(e));
      if (!wanted.has(e.id) || seen.has(e.id)) return; // not asked for: ignored
      seen.add(e.id);
      if (isEphemeral(e.kind)) return refuse(sum, "here", e.id, "ephemeral kinds are not stored");
      writes.push(
        local.writer.submit(e, storedJson(e)).then((o) => {
          if (o.status === "stored") sum.received++;
          else if (o.status === "duplicate" || o.reject.prefix === "duplicate") sum.skipped++;
          else refuse(sum, "here", e.id, reasonText(o.reject));
        }),
      );
    };
    const stop = remote.onFrame(onEvent);
    let end: unknown[];
    for (let attempt = 0; ; attempt++) {
      remote.send(["REQ", subId, { ids, limit: ids.length }]);
      end = await remote.next((f) => (f[0] === "EOSE" || f[0] === "CLOSED") && f[1] === subId);
      if (end[0] === "CLOSED" && attempt === 0 && wantsAuth(end[2]) && (await remote.authenticate()))
        continue;
      break;
    }
    remote.send(["CLOSE", subId]);
    stop();
    await Promise.all(writes);
    if (end[0] === "CLOSED") throw new RemoteError(`REQ refused: ${String(end[2])}`);
    log(`downloaded ${fmtInt(Math.min(i + BATCH, need.length))} / ${fmtInt(need.length)}`);
  }
}

/** Sends the local events the remote lacks, oldest first, a window of them awaiting OK. */
async function upload(
  remote: Remote,
  local: LocalWriter,
  have: readonly string[],
  sum: SyncSummary,
  log: (s: string) => void,
): Promise<void> {
  const events: { id: string; created_at: number; json: string }[] = [];
  for (const id of have) {
    const v = local.store.ids.get(hexBytes(id));
    const json = v && readEvent(local.store, readU64(v, 0));
    if (json) events.push({ id, created_at: (JSON.parse(json) as { created_at: number }).created_at, json });
  }
  events.sort((a, b) => a.created_at - b.created_at);
  const sendOne = async (e: (typeof events)[number]): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      remote.send(["EVENT", JSON.parse(e.json)]);
      const ok = await remote.next((f) => f[0] === "OK" && f[1] === e.id);
      if (ok[2] === true) {
        sum.sent++;
        return;
      }
      if (attempt === 0 && wantsAuth(ok[3]) && (await remote.authenticate())) continue;
      return refuse(sum, "there", e.id, String(ok[3] ?? ""));
    }
  };
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < events.length) {
      await sendOne(events[next++]!);
      if (++done % 1000 === 0) log(`uploaded ${fmtInt(done)} / ${fmtInt(events.length)}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(WINDOW, events.length) }, worker));
  if (events.length > 0) log(`uploaded ${fmtInt(events.length)} / ${fmtInt(events.length)}`);
}

function print(s: SyncSummary, json: boolean): void {
  if (json) {
    console.log(JSON.stringify(s));
    return;
  }
  const out = [
    `synced with ${s.url} (${s.dir}) in ${s.seconds.toFixed(2)} s, ${s.rounds} negentropy round trips`,
    `  have      ${String(s.have).padStart(9)}  only here`,
    `  need      ${String(s.need).padStart(9)}  only there`,
    `  received  ${String(s.received).padStart(9)}  stored here`,
    `  sent      ${String(s.sent).padStart(9)}  accepted there`,
    `  skipped   ${String(s.skipped).padStart(9)}  already stored, or an older replaceable version`,
    `  refused   ${String(s.refused).padStart(9)}`,
    ...s.reasons.map((r) => `  ${r}`),
  ];
  console.log(out.join("\n"));
}
