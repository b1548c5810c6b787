// Ingest phase: publish the dataset over C connections, each keeping `window` EVENTs in flight
// (pipelining, as busy clients and relay-to-relay sync do), and time every OK. Event i goes to
// connection i mod C. Frames are read ahead from the source (a JSONL file, or a list) up to a
// bound, so a million events never sit in this process at once; up to that bound they are read
// before the clock starts, so a 50k run only sends in its timed loop, as it always did.
// The run ends at the last OK, or when no OK has come for `stallMs` (the relay stalled), or when
// every connection has closed (the relay died), or at `timeoutMs`.
import type { Client } from "./client.ts";
import { closeAll, connectMany, signal, within } from "./client.ts";
import { readLines } from "./lines.ts";
import type { Summary } from "./stats.ts";
import { round, Samples } from "./stats.ts";
import type { WireEvent } from "./wire.ts";

/** Events in order, as their JSON: what follows `["EVENT",` in a frame. */
export interface EventSource {
  total: number;
  batches(): AsyncIterable<string[]>;
}

export const listSource = (events: readonly WireEvent[]): EventSource => ({
  total: events.length,
  async *batches() {
    yield events.map((e) => JSON.stringify(e));
  },
});

export const fileSource = (file: string, total: number): EventSource => ({
  total,
  batches: () => readLines(file),
});

/** What the ingest has done so far, for a sampler that reads it while the phase runs. */
export interface IngestProgress {
  sent: number;
  answered: number;
  accepted: number;
}

export interface IngestOptions {
  connections: number;
  window: number;
  timeoutMs: number;
  /** end the phase when no OK has come for this long (0 = never) */
  stallMs?: number;
  /** updated as the phase runs */
  progress?: IngestProgress;
}

export interface IngestResult {
  events: number;
  connections: number;
  window: number;
  answered: number;
  accepted: number;
  duplicates: number;
  rejected: number;
  /** refusal message (first 60 characters) → count */
  rejectReasons: Record<string, number>;
  seconds: number;
  acceptedPerSec: number;
  answeredPerSec: number;
  okLatencyMs: Summary;
  timedOut: boolean;
  /** no OK for stallSeconds: the phase gave up with `answered` events answered */
  stalled: boolean;
  stallSeconds: number;
  /** connections the relay closed (all of them: it died) */
  closedConnections: number;
  /** Unix ms of the first EVENT and of the last OK */
  firstEventAt: number;
  lastOkAt: number;
}

/** Frames read ahead at most (~1.1 KB each on average with the load tool's dataset). */
const READ_AHEAD = 65_536;

interface Lane {
  client: Client;
  frames: string[];
  ids: string[];
  head: number;
  inflight: number;
}

const idOf = (json: string): string =>
  json.startsWith('{"id":"') ? json.slice(7, 71) : (JSON.parse(json) as { id: string }).id;

export async function runIngest(
  url: string,
  source: EventSource | readonly WireEvent[],
  o: IngestOptions,
): Promise<IngestResult> {
  const src = "batches" in source ? source : listSource(source);
  const total = src.total;
  const clients = await connectMany(url, o.connections);
  const lanes: Lane[] = clients.map((client) => ({ client, frames: [], ids: [], head: 0, inflight: 0 }));
  const batches = src.batches()[Symbol.asyncIterator]();
  let read = 0;
  let buffered = 0;
  let eof = false;
  let reading: Promise<void> | undefined;

  const fill = async () => {
    while (!eof && buffered < READ_AHEAD) {
      const r = await batches.next();
      if (r.done) {
        eof = true;
        break;
      }
      for (const json of r.value) {
        const lane = lanes[read++ % lanes.length]!;
        lane.frames.push(`["EVENT",${json}]`);
        lane.ids.push(idOf(json));
        buffered++;
      }
    }
  };

  const latency = new Samples();
  const sentAt = new Map<string, number>();
  const reasons: Record<string, number> = {};
  const progress = o.progress ?? { sent: 0, answered: 0, accepted: 0 };
  let duplicates = 0;
  const done = signal();
  let stalled = false;
  let lastOk = 0;

  const pump = (lane: Lane) => {
    while (lane.inflight < o.window && lane.head < lane.frames.length) {
      const id = lane.ids[lane.head]!;
      sentAt.set(id, performance.now());
      lane.client.send(lane.frames[lane.head++]!);
      lane.inflight++;
      buffered--;
      progress.sent++;
    }
    // Drop what was sent now and then, so the lane's arrays do not grow with the dataset.
    if (lane.head > 4096 && lane.head * 2 > lane.frames.length) {
      lane.frames = lane.frames.slice(lane.head);
      lane.ids = lane.ids.slice(lane.head);
      lane.head = 0;
    }
    if (!reading && !eof && buffered < READ_AHEAD / 2)
      reading = fill().then(() => {
        reading = undefined;
        for (const l of lanes) pump(l);
      });
  };

  await fill();
  const started = performance.now();
  const firstEventAt = performance.timeOrigin + started;
  lastOk = started;
  for (const lane of lanes) {
    lane.client.handlers.ok = (id, ok, message) => {
      const t0 = sentAt.get(id);
      if (t0 === undefined) return;
      sentAt.delete(id);
      lastOk = performance.now();
      latency.add(lastOk - t0);
      lane.inflight--;
      progress.answered++;
      if (ok && message.startsWith("duplicate:")) duplicates++;
      else if (ok) progress.accepted++;
      else {
        // Whole messages, not just prefixes: "duplicate:" with OK false means an older replaceable.
        const why = message.slice(0, 60) || "(no message)";
        reasons[why] = (reasons[why] ?? 0) + 1;
      }
      if (progress.answered === total) done.fire();
      pump(lane);
    };
    pump(lane);
  }
  const watch = setInterval(() => {
    if (clients.every((c) => c.closed)) done.fire();
    if (o.stallMs && performance.now() - lastOk > o.stallMs) {
      stalled = true;
      done.fire();
    }
  }, 1000);
  const finished = total === 0 || (await within(done.promise, o.timeoutMs));
  clearInterval(watch);
  // Until the last OK: a stalled or timed-out run is not charged the wait that detected it.
  const seconds = Math.max(0.001, (lastOk - started) / 1000);
  const closedConnections = clients.filter((c) => c.closed).length;
  closeAll(clients);
  const { answered, accepted } = progress;
  return {
    events: total,
    connections: o.connections,
    window: o.window,
    answered,
    accepted,
    duplicates,
    rejected: answered - accepted - duplicates,
    rejectReasons: reasons,
    seconds: round(seconds),
    acceptedPerSec: round(accepted / seconds, 1),
    answeredPerSec: round(answered / seconds, 1),
    okLatencyMs: latency.summary(),
    timedOut: !finished,
    stalled: finished && stalled,
    stallSeconds: (o.stallMs ?? 0) / 1000,
    closedConnections,
    firstEventAt: Math.round(firstEventAt),
    lastOkAt: Math.round(performance.timeOrigin + lastOk),
  };
}
