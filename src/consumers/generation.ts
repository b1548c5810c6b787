// A generation: one batch of the event log as the runner holds it until the consumers have
// applied it (what the writer committed and removed, in commit order), and each consumer's view
// of it, which readers add to what the consumer's entries hold.
//
// A generation keeps each event's stored JSON, not the parsed event: the parsed form of a
// contact list naming 150 pubkeys is ~20 KiB against its 6 KiB of JSON, and held for every
// waiting event it was most of the relay's anonymous memory during a long burst. A view is
// built from the JSON when a reader first asks for it (parsed once per consumer), except for a
// consumer that wants its view at once (`eagerView`: the REQ indexes, read by every REQ), which
// builds it at commit from the event the writer already parsed.
import type { NostrEvent } from "../nostr/event.ts";
import type { Consumer } from "../store/consumer.ts";
import type { GenPayload } from "./apply.ts";

export interface Item {
  serial: number;
  json: string;
  dropped: boolean;
  /** its position in the generation's adds */
  at: number;
}

export interface RemovedItem {
  seq: number;
  serial: number;
  json: string;
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
  /** its events and their tags: how much a batch writes (runner.ts `batchWeight`) */
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
    };
  }
}

/** What consumer `c`'s view holds of an event (its `prepareView`, else what it applies). */
export function viewPart(c: Consumer, e: NostrEvent, json: string): unknown {
  return c.prepareView ? c.prepareView(e, json) : c.prepare(e);
}

/** What consumer `c`'s view holds of an item, from its stored JSON. */
const partOf = (c: Consumer, it: Item | RemovedItem): unknown =>
  viewPart(c, JSON.parse(it.json) as NostrEvent, it.json);

/** Counts an item that was added and is now dropped back out of a view that holds it. */
export function unview(consumers: readonly Consumer[], g: Gen, it: Item): void {
  for (let i = 0; i < consumers.length; i++) {
    if (g.views[i] === undefined || it.at >= g.addsSeen[i]!) continue;
    const p = partOf(consumers[i]!, it);
    if (p !== null) consumers[i]!.view(g.views[i], { serial: it.serial, p }, -1, false);
  }
}

/**
 * Consumer i's view of a generation, brought up to its latest items. A listener that reads
 * the views while this one is being built (the trending window asking the counters for a
 * note's counts) gets it as built so far: the outer call goes on with the rest, where a
 * nested one would recurse once per item (a stack overflow on a batch of thousands).
 */
export function viewOf(consumers: readonly Consumer[], g: Gen, i: number): unknown {
  const c = consumers[i]!;
  g.views[i] ??= c.newView();
  const v = g.views[i];
  if (g.building[i]) return v;
  g.building[i] = true;
  try {
    while (g.addsSeen[i]! < g.adds.length) {
      const a = g.adds[g.addsSeen[i]!++]!;
      if (a.dropped) continue;
      const p = partOf(c, a);
      if (p !== null) c.view(v, { serial: a.serial, p }, 1, false);
    }
    while (g.removesSeen[i]! < g.removes.length) {
      const r = g.removes[g.removesSeen[i]!++]!;
      const p = partOf(c, r);
      if (p !== null) c.view(v, { serial: r.serial, p }, 1, true);
    }
  } finally {
    g.building[i] = false;
  }
  return v;
}

/**
 * Brings an eager consumer's view up to date with the items just added, from the events the
 * writer parsed (`events[k]` is the event of the k-th new add, `removed[k]` of the k-th new
 * removal): no parse at all.
 */
export function viewNow(
  c: Consumer,
  g: Gen,
  i: number,
  events: readonly NostrEvent[],
  removed: readonly NostrEvent[],
): void {
  g.views[i] ??= c.newView();
  const v = g.views[i];
  let k = 0;
  while (g.addsSeen[i]! < g.adds.length) {
    const a = g.adds[g.addsSeen[i]!++]!;
    const e = events[k++]!;
    if (a.dropped) continue;
    const p = viewPart(c, e, a.json);
    if (p !== null) c.view(v, { serial: a.serial, p }, 1, false);
  }
  k = 0;
  while (g.removesSeen[i]! < g.removes.length) {
    const r = g.removes[g.removesSeen[i]!++]!;
    const p = viewPart(c, removed[k++]!, r.json);
    if (p !== null) c.view(v, { serial: r.serial, p }, 1, true);
  }
}
