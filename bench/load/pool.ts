// Runs a fixed list of requests (REQ or COUNT frames) over several connections, `inflight` at a
// time on each, timing every one from send to its final answer; shared by the query, count and
// search phases. The phase wires each connection's handlers to the tally.
import type { Client } from "./client.ts";
import { closeAll, connectMany, signal, within } from "./client.ts";
import type { Summary } from "./stats.ts";
import { round, Samples } from "./stats.ts";

export interface PoolJob<T extends string> {
  type: T;
  /** the frame to send under this sub id */
  frame(subId: string): string;
}

export interface PoolOptions {
  connections: number;
  inflight: number;
  timeoutMs: number;
  /** hears each answered request: when it was sent (performance.now()) and its latency */
  sample?: (sentAt: number, ms: number) => void;
  /** once true, no more requests are sent and the run ends when the open ones are answered */
  stop?: () => boolean;
}

/** What a connection's handlers report about the request open under a sub id. */
export interface Tally {
  /** `n` more results (EVENTs, or a COUNT's count); `flagged` marks the answer (a COUNT's hll) */
  add(subId: string, n: number, flagged?: boolean): void;
  /** the final answer: ok (EOSE, COUNT) or refused (CLOSED) */
  finish(subId: string, ok: boolean): void;
}

export interface PoolTypeResult<T extends string> {
  type: T;
  done: number;
  ms: Summary;
  /** mean results per answered request */
  meanResults: number;
  flagged: number;
}

export interface PoolResult<T extends string> {
  completed: number;
  failed: number;
  seconds: number;
  perSec: number;
  resultsPerSec: number;
  ms: Summary;
  flagged: number;
  byType: PoolTypeResult<T>[];
  timedOut: boolean;
}

export async function runPool<T extends string>(
  url: string,
  jobs: readonly PoolJob<T>[],
  types: readonly T[],
  o: PoolOptions,
  wire: (c: Client, t: Tally) => void,
): Promise<PoolResult<T>> {
  const clients = await connectMany(url, o.connections);
  const all = new Samples();
  const perType = new Map(types.map((t) => [t, { s: new Samples(), results: 0, flagged: 0 }]));
  let next = 0;
  let completed = 0;
  let failed = 0;
  let results = 0;
  let flagged = 0;
  const done = signal();
  const started = performance.now();

  clients.forEach((c: Client) => {
    const open = new Map<string, { job: PoolJob<T>; t0: number; results: number; flagged: boolean }>();
    const issue = () => {
      if (next >= jobs.length || o.stop?.()) return;
      const job = jobs[next]!;
      const subId = `q${next++}`;
      const frame = job.frame(subId);
      open.set(subId, { job, t0: performance.now(), results: 0, flagged: false });
      c.send(frame);
    };
    wire(c, {
      add(subId, n, flag) {
        const q = open.get(subId);
        if (!q) return;
        q.results += n;
        q.flagged ||= flag === true;
      },
      finish(subId, ok) {
        const q = open.get(subId);
        if (!q) return;
        open.delete(subId);
        if (ok) {
          const ms = performance.now() - q.t0;
          all.add(ms);
          o.sample?.(q.t0, ms);
          const t = perType.get(q.job.type)!;
          t.s.add(ms);
          t.results += q.results;
          results += q.results;
          if (q.flagged) {
            t.flagged++;
            flagged++;
          }
          completed++;
        } else failed++;
        issue();
        if (completed + failed === jobs.length || (o.stop?.() && completed + failed === next)) done.fire();
      },
    });
    for (let i = 0; i < o.inflight; i++) issue();
  });
  const finished = jobs.length === 0 || (await within(done.promise, o.timeoutMs));
  const seconds = (performance.now() - started) / 1000;
  closeAll(clients);
  return {
    completed,
    failed,
    seconds: round(seconds),
    perSec: round(completed / seconds, 1),
    resultsPerSec: round(results / seconds, 1),
    ms: all.summary(),
    flagged,
    byType: types.map((type) => {
      const t = perType.get(type)!;
      return {
        type,
        done: t.s.count,
        ms: t.s.summary(),
        meanResults: round(t.results / Math.max(1, t.s.count), 1),
        flagged: t.flagged,
      };
    }),
    timedOut: !finished,
  };
}

/** REQ answers: EVENTs count as results, EOSE ends the request (CLOSEd first), CLOSED refuses it. */
export function reqWire(c: Client, t: Tally): void {
  c.handlers.event = (subId) => t.add(subId, 1);
  c.handlers.eose = (subId) => {
    c.send(JSON.stringify(["CLOSE", subId]));
    t.finish(subId, true);
  };
  c.handlers.closed = (subId) => t.finish(subId, false);
}
