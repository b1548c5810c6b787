// Ingest phase: publish the dataset over C connections, each keeping `window` EVENTs in flight
// (pipelining, as busy clients and relay-to-relay sync do), and time every OK.
import type { Client } from "./client.ts";
import { closeAll, connectMany, signal, within } from "./client.ts";
import type { WireEvent } from "./dataset.ts";
import type { Summary } from "./stats.ts";
import { round, Samples } from "./stats.ts";

export interface IngestOptions {
  connections: number;
  window: number;
  timeoutMs: number;
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
}

export async function runIngest(
  url: string,
  events: readonly WireEvent[],
  o: IngestOptions,
): Promise<IngestResult> {
  // Frames are serialised up front so the timed loop only sends.
  const lanes: string[][] = Array.from({ length: o.connections }, () => []);
  const laneIds: string[][] = Array.from({ length: o.connections }, () => []);
  events.forEach((e, i) => {
    lanes[i % o.connections]!.push(`["EVENT",${JSON.stringify(e)}]`);
    laneIds[i % o.connections]!.push(e.id);
  });
  const clients = await connectMany(url, o.connections);
  const latency = new Samples();
  const sentAt = new Map<string, number>();
  const reasons: Record<string, number> = {};
  let answered = 0;
  let accepted = 0;
  let duplicates = 0;
  const allAnswered = signal();

  const started = performance.now();
  clients.forEach((c: Client, lane) => {
    const frames = lanes[lane]!;
    const ids = laneIds[lane]!;
    let next = 0;
    const sendNext = () => {
      if (next >= frames.length) return;
      sentAt.set(ids[next]!, performance.now());
      c.send(frames[next++]!);
    };
    c.handlers.ok = (id, ok, message) => {
      const t0 = sentAt.get(id);
      if (t0 === undefined) return;
      sentAt.delete(id);
      latency.add(performance.now() - t0);
      answered++;
      if (ok && message.startsWith("duplicate:")) duplicates++;
      else if (ok) accepted++;
      else {
        // Whole messages, not just prefixes: "duplicate:" with OK false means an older replaceable.
        const why = message.slice(0, 60) || "(no message)";
        reasons[why] = (reasons[why] ?? 0) + 1;
      }
      if (answered === events.length) allAnswered.fire();
      sendNext();
    };
    for (let i = 0; i < o.window; i++) sendNext();
  });
  const finished = events.length === 0 || (await within(allAnswered.promise, o.timeoutMs));
  const seconds = (performance.now() - started) / 1000;
  closeAll(clients);
  return {
    events: events.length,
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
  };
}
