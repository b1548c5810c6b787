// What readers of the REQ indexes add for the events committed after the indexes' watermark:
// each batch's view (TailIndex), built as commits reach the consumers' runner. A view keeps of
// each event only what picking and checking candidates needs (id, pubkey, kind, created_at):
// its body is in the log, read by serial like an indexed candidate's when a filter needs more
// or the event is sent. Held whole, a full backlog's bodies were up to its 48 MiB bound of
// strings on the main thread, and the parsed event of a long contact list is several times its
// JSON. Candidates come from the view's lists by author, by tag value or by kind, as the planner
// would pick them on disk, so a reader never walks the whole backlog for a narrow filter.
import type { NostrEvent } from "../nostr/event.ts";
import type { Filter, SearchMatcher } from "../nostr/filter.ts";
import { matchFilter } from "../nostr/filter.ts";
import type { Snapshot } from "../store/consumer.ts";
import { readEvent } from "../store/store.ts";
import type { Store } from "../store/types.ts";

/** An event as a view keeps it. */
export interface TailEvent {
  id: string;
  pubkey: string;
  kind: number;
  created_at: number;
  /**
   * the stored JSON of an indexed event removed since (its body has left the log), for a
   * reader that must check it against a filter; absent for the events added
   */
  json?: string;
}

/** What a view is given for one event: the record it keeps, the tags it lists it under, its JSON. */
export interface TailPart {
  event: TailEvent;
  tags: readonly (readonly string[])[];
  json: string;
}

export const tailPart = (e: NostrEvent, json: string): TailPart => ({
  event: { id: e.id, pubkey: e.pubkey, kind: e.kind, created_at: e.created_at },
  tags: e.tags,
  json,
});

/**
 * Events committed and not yet in the indexes, and indexed events removed since; and their
 * serials by pubkey, by kind and by tag (letter, then value: the value strings are the parsed
 * events', where a `letter value` key was a string more per tag), in commit order. An event
 * dropped from the view stays in those lists; readers look it up in `events`.
 */
export interface TailIndex {
  events: Map<number, TailEvent>;
  /** the highest serial added (dropped since or not): every event up to it is in this view or before it */
  top: number;
  removed: Map<number, TailEvent>;
  byAuthor: Map<string, number[]>;
  byKind: Map<number, number[]>;
  byTag: Map<string, Map<string, number[]>>;
}

export const newTail = (): TailIndex => ({
  events: new Map(),
  top: 0,
  removed: new Map(),
  byAuthor: new Map(),
  byKind: new Map(),
  byTag: new Map(),
});

function listIn<K>(m: Map<K, number[]>, k: K, serial: number): void {
  const l = m.get(k);
  if (l === undefined) m.set(k, [serial]);
  // A tag repeated in one event is listed once.
  else if (l[l.length - 1] !== serial) l.push(serial);
}

/** Counts an event into (sign 1) or out of (-1) a view, as an add or as a removal. */
export function viewTail(t: TailIndex, serial: number, d: TailPart, sign: 1 | -1, removal: boolean): void {
  if (removal) {
    if (sign > 0) t.removed.set(serial, { ...d.event, json: d.json });
    else t.removed.delete(serial);
    return;
  }
  if (sign < 0) {
    t.events.delete(serial);
    return;
  }
  const e = d.event;
  t.events.set(serial, e);
  if (serial > t.top) t.top = serial;
  listIn(t.byAuthor, e.pubkey, serial);
  listIn(t.byKind, e.kind, serial);
  for (const tag of d.tags) {
    const letter = tag[0]!;
    const value = tag[1];
    if (value === undefined || letter.length !== 1) continue;
    let values = t.byTag.get(letter);
    if (values === undefined) {
      values = new Map();
      t.byTag.set(letter, values);
    }
    listIn(values, value, serial);
  }
}

/** What one reader of the REQ indexes sees: their watermark and the views after it. */
export type IndexSnapshot = Snapshot<TailIndex>;

/** Whether a serial was removed since the snapshot's indexes were written. */
export function removedIn(snap: IndexSnapshot, serial: number): boolean {
  for (const t of snap.views) if (t.removed.has(serial)) return true;
  return false;
}

/** The events after the watermark (not removed since), for a reader to match itself. */
export function* tailEvents(snap: IndexSnapshot): Generator<[number, TailEvent]> {
  for (const t of snap.views) for (const entry of t.events) if (!removedIn(snap, entry[0])) yield entry;
}

/** Indexed events removed since the watermark (their entries may still be on disk). */
export function* tailRemoved(snap: IndexSnapshot): Generator<[number, TailEvent]> {
  for (const t of snap.views) for (const entry of t.removed) if (entry[0] <= snap.through) yield entry;
}

/** The body of a view's event: its stored JSON, read from the log when it is still there. */
export type TailBody = (serial: number, e: TailEvent) => string | undefined;

/** The body of a view's event from the log (a removed one carries its own). */
export const bodyFrom =
  (s: Store): TailBody =>
  (serial, e) =>
    e.json ?? readEvent(s, serial);

/**
 * The reader's access rule on a view's event: it can only refuse restricted kinds (DMs, gift
 * wraps), so the body of any other kind is not read for it. An event whose body has left the
 * log since is refused (a reader would find nothing to send).
 */
export function refusedInTail(
  serial: number,
  e: TailEvent,
  body: TailBody,
  o: { allow?: (json: string) => boolean; restrictedKind?: (kind: number) => boolean },
): boolean {
  if (!o.allow || (o.restrictedKind && !o.restrictedKind(e.kind))) return false;
  const json = body(serial, e);
  return json === undefined || !o.allow(json);
}

/**
 * Whether a kept event matches `f`. `tagDone`: its first tag condition is known to hold (the
 * event came from that tag's list). The body is read and parsed only for a condition the kept
 * fields do not decide (a further tag, search); an event whose body has left the log since
 * (removed a moment ago) matches nothing.
 */
export function matchTail(
  f: Filter,
  serial: number,
  e: TailEvent,
  body: TailBody,
  search?: SearchMatcher,
  tagDone = false,
): boolean {
  if (f.ids && !f.ids.includes(e.id)) return false;
  if (f.authors && !f.authors.includes(e.pubkey)) return false;
  if (f.kinds && !f.kinds.includes(e.kind)) return false;
  if (f.since !== undefined && e.created_at < f.since) return false;
  if (f.until !== undefined && e.created_at > f.until) return false;
  const tags = f.tags?.length ?? 0;
  if (f.search === undefined && (tags === 0 || (tags === 1 && tagDone))) return true;
  const json = body(serial, e);
  return json !== undefined && matchFilter(f, JSON.parse(json) as NostrEvent, search);
}

/**
 * The events after the watermark (not removed since) that match `f`, in commit order per view:
 * candidates come from the view's lists by author, else by the filter's first tag, else by kind.
 */
export function* tailMatches(
  snap: IndexSnapshot,
  f: Filter,
  body: TailBody,
  search?: SearchMatcher,
): Generator<[number, TailEvent]> {
  for (const t of snap.views) {
    const pick = candidateLists(t, f);
    if (pick === undefined) {
      for (const entry of t.events)
        if (!removedIn(snap, entry[0]) && matchTail(f, entry[0], entry[1], body, search)) yield entry;
      continue;
    }
    // One list per value of the field: an event may be in two of them.
    const seen = pick.lists.length > 1 ? new Set<number>() : undefined;
    for (const list of pick.lists)
      for (const serial of list) {
        if (seen) {
          if (seen.has(serial)) continue;
          seen.add(serial);
        }
        const e = t.events.get(serial);
        if (e !== undefined && !removedIn(snap, serial) && matchTail(f, serial, e, body, search, pick.byTag))
          yield [serial, e];
      }
  }
}

const NONE: number[] = [];

/** The view's lists a filter's candidates are in, or undefined: every event is one. */
function candidateLists(t: TailIndex, f: Filter): { lists: number[][]; byTag: boolean } | undefined {
  if (f.authors) return { lists: f.authors.map((a) => t.byAuthor.get(a) ?? NONE), byTag: false };
  const tag = f.tags?.[0];
  if (tag) {
    const values = t.byTag.get(tag[0]);
    return { lists: tag[1].map((v) => values?.get(v) ?? NONE), byTag: true };
  }
  if (f.kinds) return { lists: f.kinds.map((k) => t.byKind.get(k) ?? NONE), byTag: false };
  return undefined;
}
