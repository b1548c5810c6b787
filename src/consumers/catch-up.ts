// Bringing the consumers up to the log on disk at start-up (the relay, before its writer starts)
// and in the data commands: each consumer resumes from its watermark, or is rebuilt from the
// whole log when its entries are missing, of another version, or of another log.
import type { Batch, Consumer, Watermark } from "../store/consumer.ts";
import { readWatermark, writeWatermark } from "../store/consumer.ts";
import { removalsAfter, trimRemovals } from "../store/removals.ts";
import type { HighWater } from "../store/serials.ts";
import { currentHighWater } from "../store/serials.ts";
import { derivedWrite, replayStored } from "../store/store.ts";
import type { Store } from "../store/types.ts";

/** Progress of a long catch-up: events of `total` read so far for consumer `name`. */
export type Progress = (name: string, events: number, total: number) => void;

/**
 * Brings every consumer up to the log on disk (rebuilding those whose entries are missing or
 * of another version), synchronously. Run before the writer starts, and by data commands.
 * Covers the log up to the high-water marks read when it starts, which it leaves in
 * `store.lastSerial` and `store.lastRemoval`: what another process commits meanwhile is for
 * the writer to notice (writer.ts), so nothing is applied twice. `until`: the marks to cover
 * instead, those a running writer has already handed on (a relay resuming its consumers).
 */
export function catchUp(
  s: Store,
  consumers: readonly Consumer[],
  log: (line: string) => void,
  progress?: Progress,
  batch = 10_000,
  until?: HighWater,
): { gen: number; high: HighWater } {
  const high = until ?? currentHighWater(s);
  s.lastSerial = high.serial;
  s.lastRemoval = high.removal;
  let gen = 0;
  for (const c of consumers) {
    let w = readWatermark(s, c.name);
    if (!w && c.adopt?.(s)) {
      const adopted: Watermark = {
        version: c.version,
        gen: 0,
        serial: high.serial,
        removal: high.removal,
      };
      derivedWrite(s, () => writeWatermark(s, c.name, adopted), "few");
      w = adopted;
    }
    // A watermark past the log's high-water marks belongs to another log (a data.mdb restored
    // under a newer derived/): its entries cover events this log never had, and the events
    // that get those serials here would be skipped. Rebuilt like a change of version.
    const foreign = w !== undefined && (w.serial > high.serial || w.removal > high.removal);
    if (foreign)
      log(`${c.name}: its entries go beyond this log (serial ${w!.serial} > ${high.serial}); rebuilding`);
    const rebuild = !w || w.version !== c.version || foreign;
    const started = performance.now();
    if (rebuild) {
      const fresh: Watermark = { version: c.version, gen: w?.gen ?? 0, serial: 0, removal: high.removal };
      derivedWrite(
        s,
        () => {
          c.clear(s);
          writeWatermark(s, c.name, fresh);
        },
        "few",
      );
      w = fresh;
    }
    const events = replay(s, c, w!, high, batch, progress);
    if (rebuild && events > 0)
      log(`${c.name}: built from ${events} stored events in ${Math.round(performance.now() - started)} ms`);
    gen = Math.max(gen, w!.gen);
  }
  if (consumers.length > 0) s.env.transactionSync(() => trimRemovals(s.removals, high.removal));
  return { gen, high };
}

/**
 * Applies the log after `w` from disk: removal records first, then stored events in batches.
 * Returns how many stored events it read.
 */
function replay(
  s: Store,
  c: Consumer,
  w: Watermark,
  high: HighWater,
  batch: number,
  progress?: Progress,
): number {
  // Up to date: no write transaction at all (a relay starting on a full disk starts, and says
  // so when it has something to write).
  if (w.serial >= high.serial && w.removal >= high.removal) return 0;
  let b: Batch | undefined;
  // In each write transaction of replayStored, its own batch (opened with the first event).
  const open = (): Batch => {
    b ??= c.batch(s);
    return b;
  };
  // A removal undoes an event only if an earlier batch applied it; an event removed before its
  // batch was applied has no body left, so it is not applied either. They go with the first
  // batch of stored events.
  const removes = [...removalsAfter(s.removals, w.removal)].filter(
    (r) => r.seq <= high.removal && r.serial <= w.serial,
  );
  const total = high.serial - w.serial;
  let through = w.serial;
  // The last batch covers the marks even when the newest events were removed since.
  let read = 0;
  return replayStored(
    s,
    w.serial + 1,
    high.serial,
    batch,
    (e, serial) => {
      if (read === 0) for (const r of removes.splice(0)) open().add(r.event, r.serial, -1);
      through = serial;
      read++;
      open().add(e, serial, 1);
    },
    () => {
      const last = read < batch;
      read = 0;
      for (const r of removes.splice(0)) open().add(r.event, r.serial, -1);
      b?.write();
      b = undefined;
      writeWatermark(s, c.name, { ...w, serial: last ? high.serial : through, removal: high.removal });
    },
    (n) => progress?.(c.name, n, total),
  );
}
