// "Older" pages: what comes after the oldest note shown, with no gap and no note twice. Lists in
// time order ask `until` the oldest created_at shown, with room for the notes already shown at
// that second (the relay orders ties by id, so they come first and are skipped). A search ranks
// its answer instead of ordering it by time, so its pages are built from time windows each
// answered in full (see SearchPages).
import type { Filter, NostrEvent } from "../relay/socket.ts";
import { button, h } from "../render/dom.ts";
import { newestFirst } from "../render/views.ts";
import { fetchOnce, now, type Shell } from "./shell.ts";

export interface Page {
  events: NostrEvent[];
  /** nothing older is left */
  end: boolean;
}

/** Where the next older page of a time-ordered list starts. */
export class TimeCursor {
  private until: number | undefined;
  /** the ids seen at `until`, which the next page's answer repeats */
  private atUntil = new Set<string>();

  /** Notes loaded from the stream this cursor pages through (not live ones). */
  seen(events: readonly NostrEvent[]): void {
    for (const ev of events) {
      if (this.until === undefined || ev.created_at < this.until) {
        this.until = ev.created_at;
        this.atUntil = new Set([ev.id]);
      } else if (ev.created_at === this.until) this.atUntil.add(ev.id);
    }
  }

  /** Starts again from these notes (the list dropped its oldest cards). */
  reset(events: readonly NostrEvent[]): void {
    this.until = undefined;
    this.atUntil.clear();
    this.seen(events);
  }

  /** The next page of `filter`: `size` notes older than those seen, each new. */
  async next(s: Shell, filter: Filter, size: number): Promise<Page> {
    if (this.until === undefined) {
      const events = await fetchOnce(s, [{ ...filter, limit: size }]);
      this.seen(events);
      return { events, end: events.length < size };
    }
    const until = this.until;
    const repeat = this.atUntil;
    const limit = Math.min(size + repeat.size, s.maxLimit);
    const got = await fetchOnce(s, [{ ...filter, until, limit }]);
    const events = got.filter((e) => !(e.created_at === until && repeat.has(e.id)));
    this.seen(got);
    return { events, end: got.length < limit };
  }
}

/**
 * Pages of a NIP-50 search, newest first. The relay answers a search with its best matches, not
 * its newest, so "until the oldest shown" alone would skip newer matches ranked lower. Each page
 * is taken from windows [since, until] small enough that the relay answers all of their matches
 * (fewer than the limit asked); matches fetched beyond a page wait for the next one.
 */
export class SearchPages {
  /** nothing newer than this is left to fetch (undefined: nothing fetched yet) */
  private until: number | undefined;
  private span = 3600;
  private done = false;
  /** whether to ask first for everything left (at the start, and after a sparse window) */
  private probe = true;
  private readonly waiting: NostrEvent[] = [];
  private readonly shown = new Set<string>();

  constructor(
    private readonly s: Shell,
    private readonly filter: Filter,
  ) {}

  async next(size: number): Promise<Page> {
    while (this.waiting.length < size && !this.done) await this.fetch(size);
    this.waiting.sort(newestFirst);
    const events = this.waiting.splice(0, size).filter((e) => !this.shown.has(e.id));
    for (const e of events) this.shown.add(e.id);
    return { events, end: this.done && this.waiting.length === 0 };
  }

  private async fetch(size: number): Promise<void> {
    const bound = (f: Filter): Filter => (this.until === undefined ? f : { ...f, until: this.until });
    if (this.probe) {
      // Everything left, when that is less than a page (most searches end here at once).
      const rest = await fetchOnce(this.s, [bound({ ...this.filter, limit: size })]);
      if (rest.length < size) {
        this.waiting.push(...rest);
        this.done = true;
        return;
      }
    }
    for (;;) {
      const top = this.until ?? now();
      const since = Math.max(0, top - this.span + 1);
      // One second with more matches than a page: all of them, as far as the relay allows.
      const limit = this.span === 1 ? this.s.maxLimit : size;
      // The first window has no upper bound: notes dated a little ahead count too.
      const got = await fetchOnce(this.s, [bound({ ...this.filter, since, limit })]);
      if (got.length >= limit && this.span > 1) {
        this.span = Math.ceil(this.span / 2);
        continue;
      }
      this.waiting.push(...got);
      this.until = since - 1;
      if (since === 0) this.done = true;
      this.probe = got.length < size / 4;
      if (this.probe) this.span *= 2;
      return;
    }
  }
}

/** The "Older" button under a list; `load` adds a page and says whether the end was reached. */
export function olderButton(label: string, load: () => Promise<boolean>): OlderButton {
  const status = h("span", { class: "muted" });
  const wrap = h("div", { class: "older", "data-pages": "1" });
  const b = button(label, async () => {
    b.disabled = true;
    b.textContent = "Loading…";
    const end = await load();
    wrap.dataset.pages = String(Number(wrap.dataset.pages) + 1);
    b.textContent = label;
    b.disabled = false;
    if (end) finish();
  });
  const finish = () => {
    b.hidden = true;
    status.textContent = "No older notes.";
    wrap.dataset.end = "true";
  };
  wrap.append(b, status);
  return Object.assign(wrap, { finish });
}

export type OlderButton = HTMLElement & { finish(): void };
