// A generation: one batch of the event log as the runner holds it until the consumers have
// applied it (what the writer committed and removed, in commit order), and each consumer's view
// of it, which readers add to what the consumer's entries hold.
//
// A generation keeps each event's serial, not its JSON or the parsed event: the log holds the
// bodies, and a generation held whole was up to the backlog's bound of strings on the main
// thread (48 MiB), the parsed form of a contact list naming 150 pubkeys ~20 KiB against its 6 KiB
// of JSON. A view is built from the log when a reader first asks for it (each event read and
// parsed once per consumer), except for a consumer that wants its view at once (`eagerView`: the
// REQ indexes, read by every REQ), which builds it at commit from the event the writer parsed.
import type { NostrEvent } from "../nostr/event.ts";
import { CommittedReader, removalRecord } from "../store/committed.ts";
import type { Consumer } from "../store/consumer.ts";
import type { Store } from "../store/types.ts";
import type { GenPayload } from "./messages.ts";

export interface Item {
  serial: number;
  /** its stored JSON's length (the backlog's bound counts it) */
  bytes: number;
  dropped: boolean;
  /** its position in the generation's adds */
  at: number;
}

export interface RemovedItem {
  seq: number;
  serial: number;
}

/** One batch of the log, from the end of the previous one to `maxSerial` / `maxSeq`. */
export class Gen {
  readonly adds: Item[] = [];
  readonly bySerial = new Map<number, Item>();
  readonly removes: RemovedItem[] = [];
  /** per consumer: its view, and how many adds and removes it covers */
  readonly views: unknown[];
  readonly addsSeen: number[];
  readonly removesSeen: number[];
  /** per consumer: its view is being built (a listener reads the views meanwhile) */
  readonly building: boolean[];
  /** events in the batch that are not dropped */
  live = 0;
  /** stored JSON bytes of those events and of the removals (the backlog's bound counts them) */
  bytes = 0;
  /** its events and their tags: how much a batch writes (runner.ts `committed`) */
  weight = 0;
  /** when the first item arrived (ms), for lag */
  firstAt = 0;

  constructor(
    readonly n: number,
    consumers: readonly Consumer[],
    public maxSerial: number,
    public maxSeq: number,
  ) {
    this.views = consumers.map(() => undefined);
    this.addsSeen = consumers.map(() => 0);
    this.removesSeen = consumers.map(() => 0);
    this.building = consumers.map(() => false);
  }

  get empty(): boolean {
    return this.adds.length === 0 && this.removes.length === 0;
  }

  /** The log's high-water marks after a commit, which may pass serials that never come here. */
  reaches(high: { serial: number; removal: number }): void {
    if (high.serial > this.maxSerial) this.maxSerial = high.serial;
    if (high.removal > this.maxSeq) this.maxSeq = high.removal;
  }

  /**
   * What one commit stored and removed, in commit order. An event added and removed in this
   * generation is in neither side of it (views built past it forget it); the eager views are
   * brought up to date from the events the writer parsed.
   */
  take(
    consumers: readonly Consumer[],
    stored: readonly { event: NostrEvent; json: string; serial: number }[],
    removed: readonly { event: NostrEvent; json: string; serial: number; seq: number }[],
  ): void {
    if (this.firstAt === 0) this.firstAt = performance.now();
    for (const c of stored) {
      const item: Item = { serial: c.serial, bytes: c.json.length, dropped: false, at: this.adds.length };
      this.adds.push(item);
      this.bySerial.set(c.serial, item);
      this.live++;
      this.bytes += item.bytes;
      this.weight += 1 + c.event.tags.length;
      if (c.serial > this.maxSerial) this.maxSerial = c.serial;
    }
    const kept: (typeof removed)[number][] = [];
    for (const r of removed) {
      if (r.seq > this.maxSeq) this.maxSeq = r.seq;
      const added = this.bySerial.get(r.serial);
      if (added) {
        added.dropped = true;
        this.bySerial.delete(r.serial);
        this.live--;
        this.bytes -= added.bytes;
        unview(consumers, this, added, r.event, r.json);
        continue;
      }
      this.removes.push({ seq: r.seq, serial: r.serial });
      this.bytes += r.json.length;
      this.weight += 1 + r.event.tags.length;
      kept.push(r);
    }
    for (let i = 0; i < consumers.length; i++)
      if (consumers[i]!.eagerView) viewNow(consumers[i]!, this, i, stored, kept);
  }

  payload(): GenPayload {
    const adds = new Float64Array(this.live);
    let k = 0;
    for (const a of this.adds) if (!a.dropped) adds[k++] = a.serial;
    return {
      n: this.n,
      maxSerial: this.maxSerial,
      maxSeq: this.maxSeq,
      adds,
      removes: Float64Array.from(this.removes, (r) => r.seq),
      bytes: this.bytes,
    };
  }
}

/** What consumer `c`'s view holds of an event (its `prepareView`, else what it prepares). */
export function viewPart(c: Consumer, e: NostrEvent, json: string): unknown {
  return c.prepareView ? c.prepareView(e, json) : c.prepare(e);
}

/** What consumer `c`'s view holds of a stored event or of a removal record, read from the log. */
function partOf(c: Consumer, json: string): unknown {
  return viewPart(c, JSON.parse(json) as NostrEvent, json);
}

/**
 * Counts an item that was added and is now dropped back out of a view that holds it: `e` and
 * `json` are the removed event's (its body has just left the log).
 */
export function unview(consumers: readonly Consumer[], g: Gen, it: Item, e: NostrEvent, json: string): void {
  for (let i = 0; i < consumers.length; i++) {
    if (g.views[i] === undefined || it.at >= g.addsSeen[i]!) continue;
    const p = viewPart(consumers[i]!, e, json);
    if (p !== null) consumers[i]!.view(g.views[i], { serial: it.serial, p }, -1, false);
  }
}

/**
 * Consumer i's view of a generation, brought up to its latest items, reading the events it has
 * not seen from the log of `s`. A listener that reads the views while this one is being built
 * (the trending window asking the counters for a note's counts) gets it as built so far: the
 * outer call goes on with the rest, where a nested one would recurse once per item (a stack
 * overflow on a batch of thousands).
 */
export function viewOf(s: Store, consumers: readonly Consumer[], g: Gen, i: number): unknown {
  const c = consumers[i]!;
  g.views[i] ??= c.newView();
  const v = g.views[i];
  if (g.building[i]) return v;
  g.building[i] = true;
  try {
    const committed = new CommittedReader(s, g.maxSeq);
    while (g.addsSeen[i]! < g.adds.length) {
      const a = g.adds[g.addsSeen[i]!++]!;
      if (a.dropped) continue;
      const p = partOf(c, committed.json(a.serial));
      if (p !== null) c.view(v, { serial: a.serial, p }, 1, false);
    }
    while (g.removesSeen[i]! < g.removes.length) {
      const r = g.removes[g.removesSeen[i]!++]!;
      const p = partOf(c, removalRecord(s, r.seq).json);
      if (p !== null) c.view(v, { serial: r.serial, p }, 1, true);
    }
  } finally {
    g.building[i] = false;
  }
  return v;
}

/**
 * Brings an eager consumer's view up to date with the items just added, from the events the
 * writer parsed (`events[k]` and `jsons[k]` are the k-th new add's, `removed[k]` and
 * `removedJsons[k]` the k-th new removal's): no read, no parse.
 */
export function viewNow(
  c: Consumer,
  g: Gen,
  i: number,
  events: readonly { event: NostrEvent; json: string }[],
  removed: readonly { event: NostrEvent; json: string }[],
): void {
  g.views[i] ??= c.newView();
  const v = g.views[i];
  let k = 0;
  while (g.addsSeen[i]! < g.adds.length) {
    const a = g.adds[g.addsSeen[i]!++]!;
    const e = events[k++]!;
    if (a.dropped) continue;
    const p = viewPart(c, e.event, e.json);
    if (p !== null) c.view(v, { serial: a.serial, p }, 1, false);
  }
  k = 0;
  while (g.removesSeen[i]! < g.removes.length) {
    const r = g.removes[g.removesSeen[i]!++]!;
    const e = removed[k++]!;
    const p = viewPart(c, e.event, e.json);
    if (p !== null) c.view(v, { serial: r.serial, p }, 1, true);
  }
}
