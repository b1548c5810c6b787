// A generation: one batch of the event log as the runner holds it until the consumers have
// applied it (what the writer committed and removed, in commit order), and each consumer's view
// of it, built when a reader first asks, which readers add to what the consumer's entries hold.
import type { Consumer } from "../store/consumer.ts";
import type { Committed } from "../store/writer.ts";
import type { GenPayload } from "./apply.ts";

export interface Item {
  serial: number;
  event: Committed["event"];
  json: string;
  dropped: boolean;
  /** its position in the generation's adds */
  at: number;
  /** what each consumer derived, once a view or the in-thread applier needed it */
  ps?: unknown[];
}

export interface RemovedItem {
  seq: number;
  serial: number;
  event: Committed["event"];
  json: string;
  ps?: unknown[];
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

/** What consumer `i` derived from an item, computed once. */
export function derived(cs: readonly Consumer[], it: Item | RemovedItem, i: number): unknown {
  it.ps ??= new Array(cs.length);
  if (it.ps[i] === undefined) it.ps[i] = cs[i]!.prepare(it.event);
  return it.ps[i];
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
      const p = derived(consumers, a, i);
      if (p !== null) c.view(v, { serial: a.serial, p }, 1, false);
    }
    while (g.removesSeen[i]! < g.removes.length) {
      const r = g.removes[g.removesSeen[i]!++]!;
      const p = derived(consumers, r, i);
      if (p !== null) c.view(v, { serial: r.serial, p }, 1, true);
    }
  } finally {
    g.building[i] = false;
  }
  return v;
}
