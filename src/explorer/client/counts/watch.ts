// The counts under every note card of a view: replies, reposts, reactions and zapped sats. A page
// of cards costs one GET /v0/notes/counts (none when the API answer that brought the cards had
// their counts); one live subscription over every card on screen then hears each event that
// engages one of them, and the counts of the cards it names are asked again. Without the API the
// page fetches the engagement events over the WebSocket and counts them itself (tally.ts).
import { type Counts, fetchCounts } from "../relay/api.ts";
import type { Filter, NostrEvent, RelaySocket } from "../relay/socket.ts";
import { h } from "../render/dom.ts";
import type { CardFooters } from "../render/views.ts";
import { ENGAGING_KINDS, engagements } from "./tally.ts";

const zero = (): Counts => ({ likes: 0, reactions: 0, reposts: 0, replies: 0, zaps: 0, sats: 0 });

/** Cards that arrive live within this long share one request. */
const LIVE_BATCH_MS = 300;
/** Events that engage cards within this long share one request for the new counts. */
const REFRESH_MS = 150;
/** A relay refuses filters with more values than this (limits.maxFilterValues, by default). */
const FILTER_VALUES = 1000;

export class CardCounts implements CardFooters {
  private readonly values = new Map<string, Counts>();
  /** without the API: the millisatoshis behind `sats`, and the events already counted */
  private readonly msats = new Map<string, bigint>();
  private readonly counted = new Set<string>();
  private readonly partial = new Set<string>();
  private readonly watched = new Set<string>();
  /** the live subscriptions open: one, or two while the newer replaces the older */
  private readonly lives = new Set<() => void>();
  private readonly arrived = new Set<string>();
  private readonly touched = new Set<string>();
  private arrivedTimer: ReturnType<typeof setTimeout> | undefined;
  private touchedTimer: ReturnType<typeof setTimeout> | undefined;
  private apiOff = false;
  private closed = false;
  /** told about every live event that engages a card (the thread view adds replies with it) */
  onLive: (ev: NostrEvent) => void = () => {};

  constructor(
    private readonly socket: RelaySocket,
    /** the relay's largest `limit` (NIP-11 limitation.max_limit) */
    private readonly maxLimit: number,
  ) {}

  /** The counts line of a card, painted now when known and again whenever they change. */
  footer(id: string): HTMLElement {
    const el = h("footer", { class: "counts", "data-for": id });
    this.paint(el, id);
    return el;
  }

  /**
   * A page of cards: counts an API answer already gave are taken as they are, the others asked
   * in one request (one REQ without the API). From then on their cards follow live events.
   */
  async page(ids: string[], known?: ReadonlyMap<string, Counts>): Promise<void> {
    const fresh = [...new Set(ids)].filter((id) => !this.watched.has(id));
    if (fresh.length === 0 || this.closed) return;
    for (const id of fresh) this.watched.add(id);
    // Listening before asking: an event stored while the counts are read is then either in them
    // or heard (unless the HTTP request overtakes the REQ on its way to the relay).
    this.listen();
    const ask: string[] = [];
    for (const id of fresh) {
      const c = known?.get(id);
      if (c) this.set(id, c);
      else ask.push(id);
    }
    if (ask.length === 0) return;
    if (!this.apiOff) {
      const got = await fetchCounts(ask);
      if (this.closed) return;
      if (got) {
        for (const id of ask) this.set(id, got.get(id) ?? zero());
        return;
      }
      this.apiOff = true;
    }
    await this.tally(ask);
  }

  /** A card that arrived live; asked together with the others that arrive close to it. */
  add(id: string): void {
    if (this.watched.has(id)) return;
    this.arrived.add(id);
    this.arrivedTimer ??= setTimeout(() => {
      this.arrivedTimer = undefined;
      const ids = [...this.arrived];
      this.arrived.clear();
      void this.page(ids);
    }, LIVE_BATCH_MS);
  }

  close(): void {
    this.closed = true;
    for (const close of this.lives) close();
    this.lives.clear();
    clearTimeout(this.arrivedTimer);
    clearTimeout(this.touchedTimer);
  }

  private set(id: string, c: Counts): void {
    this.values.set(id, c);
    for (const el of document.querySelectorAll<HTMLElement>(`.counts[data-for="${CSS.escape(id)}"]`))
      this.paint(el, id);
  }

  private paint(el: HTMLElement, id: string): void {
    const c = this.values.get(id);
    el.dataset.state = c ? "known" : "waiting";
    if (!c) return;
    const more = this.partial.has(id) ? "+" : "";
    const item = (key: string, symbol: string, n: number, title: string) => {
      const span = h("span", { class: `n ${key}`, "data-n": String(n), title: `${n}${more} ${title}` });
      span.append(
        h("span", { class: "sym", "aria-hidden": "true" }, symbol),
        ` ${n.toLocaleString()}${more}`,
      );
      if (n === 0) span.classList.add("zero");
      return span;
    };
    const reactions = c.likes + c.reactions;
    el.replaceChildren(
      item("replies", "↩", c.replies, c.replies === 1 ? "reply" : "replies"),
      item("reposts", "⇄", c.reposts, c.reposts === 1 ? "repost" : "reposts"),
      item("reactions", "♥", reactions, `reactions (${c.likes} likes)`),
      item("sats", "⚡", c.sats, `sats zapped in ${c.zaps} ${c.zaps === 1 ? "zap" : "zaps"}`),
    );
  }

  /**
   * One live subscription over every card watched, replaced as cards are added: the new one is
   * open before the old one closes, so no event falls between them.
   */
  private listen(): void {
    const filters = byValues([...this.watched], { limit: 0 });
    const older = [...this.lives];
    const close = this.socket.subscribe(filters, {
      event: (ev) => this.heard(ev),
      eose: () => {
        for (const o of older) {
          o();
          this.lives.delete(o);
        }
      },
      // Refused (too many subscriptions, say): the older ones keep listening.
      closed: () => this.lives.delete(close),
    });
    this.lives.add(close);
  }

  private heard(ev: NostrEvent): void {
    this.onLive(ev);
    const ids = engagements(ev)
      .map((g) => g.id)
      .filter((id) => this.watched.has(id));
    if (ids.length === 0) return;
    if (this.apiOff) {
      this.count(ev);
      return;
    }
    for (const id of ids) this.touched.add(id);
    this.touchedTimer ??= setTimeout(() => void this.refresh(), REFRESH_MS);
  }

  /** The counts of the cards live events engaged, asked again: the API's numbers stay the truth. */
  private async refresh(): Promise<void> {
    this.touchedTimer = undefined;
    const ids = [...this.touched];
    this.touched.clear();
    const got = await fetchCounts(ids);
    if (this.closed || !got) return;
    for (const id of ids) this.set(id, got.get(id) ?? zero());
  }

  /** Without the API: the engagement events of these cards, counted here. */
  private async tally(ids: string[]): Promise<void> {
    for (const id of ids) if (!this.values.has(id)) this.values.set(id, zero());
    let n = 0;
    await new Promise<void>((done) => {
      const close = this.socket.subscribe(byValues(ids, { limit: this.maxLimit }), {
        event: (ev) => {
          n++;
          this.count(ev, false);
        },
        eose: () => {
          close();
          done();
        },
        closed: () => done(),
      });
    });
    // The relay's limit cut an answer: these counts are at least what they say.
    if (n >= this.maxLimit) for (const id of ids) this.partial.add(id);
    for (const id of ids) this.set(id, this.values.get(id)!);
  }

  /** Adds what an event contributes, once per event; `paint` false leaves the cards for later. */
  private count(ev: NostrEvent, paint = true): void {
    if (this.counted.has(ev.id)) return;
    this.counted.add(ev.id);
    for (const g of engagements(ev)) {
      const c = this.values.get(g.id);
      if (!c || !this.watched.has(g.id)) continue;
      c[g.field]++;
      if (g.msats !== undefined) {
        const total = (this.msats.get(g.id) ?? 0n) + g.msats;
        this.msats.set(g.id, total);
        c.sats = Number(total / 1000n);
      }
      if (paint) this.set(g.id, c);
    }
  }
}

/** The engagement of `ids`, in filters of at most FILTER_VALUES ids each. */
function byValues(ids: string[], extra: Filter): Filter[] {
  const filters: Filter[] = [];
  for (let i = 0; i < ids.length; i += FILTER_VALUES)
    filters.push({ kinds: ENGAGING_KINDS, "#e": ids.slice(i, i + FILTER_VALUES), ...extra });
  return filters;
}
