// Rendering events: note cards with linked author names and their counts, lists that stay ordered
// as live events arrive, profile headers and an event's full JSON. Every string from an event is
// a text node.
import { decodeEntity, npub, routeOf } from "../nostr/entities.ts";
import { displayName, type Profile, parseProfile } from "../nostr/profile.ts";
import type { NostrEvent, RelaySocket } from "../relay/socket.ts";
import { ago, type Child, h, link } from "./dom.ts";

/** What puts a counts line under a card (counts/watch.ts), named here so cards need not know it. */
export interface CardFooters {
  footer(id: string): HTMLElement;
}

export const shortKey = (pubkey: string): string => {
  const n = npub(pubkey);
  return `${n.slice(0, 12)}…${n.slice(-6)}`;
};

/**
 * Author names: fetched in batches (one REQ for the kind 0 of every pubkey not seen yet) and
 * written into every element showing that author.
 */
export class Names {
  readonly profiles = new Map<string, { at: number; p: Profile }>();
  private asked = new Set<string>();
  private queue = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  images = false;

  constructor(private socket: RelaySocket) {}

  /** An element that shows the author's name, filled in when the profile arrives. */
  author(pubkey: string): HTMLElement {
    const el = link(`#/p/${npub(pubkey)}`, "");
    el.classList.add("author");
    el.dataset.pk = pubkey;
    this.paint(el, pubkey);
    if (!this.profiles.has(pubkey)) this.want(pubkey);
    return el;
  }

  learn(ev: NostrEvent): void {
    if (ev.kind !== 0) return;
    const had = this.profiles.get(ev.pubkey);
    if (had && had.at >= ev.created_at) return;
    this.profiles.set(ev.pubkey, { at: ev.created_at, p: parseProfile(ev.content) });
    for (const el of document.querySelectorAll<HTMLElement>(".author[data-pk]"))
      if (el.dataset.pk === ev.pubkey) this.paint(el, ev.pubkey);
    if (this.images)
      for (const el of document.querySelectorAll<HTMLElement>(".avatar[data-pk]"))
        if (el.dataset.pk === ev.pubkey) el.replaceWith(this.avatar(ev.pubkey, el.classList.contains("big")));
  }

  /**
   * The author's picture when pictures are switched on (loaded lazily, without a referrer, from
   * https only), else a colour from the pubkey.
   */
  avatar(pubkey: string, big = false): HTMLElement {
    const props = { class: big ? "avatar big" : "avatar", "data-pk": pubkey };
    const pic = this.profiles.get(pubkey)?.p.picture;
    if (this.images && pic && /^https:\/\//i.test(pic)) {
      const img = h("img", props);
      img.alt = "";
      img.loading = "lazy";
      img.decoding = "async";
      img.referrerPolicy = "no-referrer";
      img.src = pic;
      return img;
    }
    const el = h("span", { ...props, "aria-hidden": "true" });
    el.style.background = `hsl(${Number.parseInt(pubkey.slice(0, 6), 16) % 360} 55% 55%)`;
    return el;
  }

  private paint(el: HTMLElement, pubkey: string): void {
    const name = displayName(this.profiles.get(pubkey)?.p);
    el.textContent = name || shortKey(pubkey);
    el.title = npub(pubkey);
  }

  private want(pubkey: string): void {
    if (this.asked.has(pubkey)) return;
    this.asked.add(pubkey);
    this.queue.add(pubkey);
    this.timer ??= setTimeout(() => this.flush(), 50);
  }

  private flush(): void {
    this.timer = undefined;
    const authors = [...this.queue];
    this.queue.clear();
    for (let i = 0; i < authors.length; i += 100) {
      const batch = authors.slice(i, i + 100);
      const close = this.socket.subscribe([{ kinds: [0], authors: batch }], {
        event: (e) => this.learn(e),
        eose: () => close(),
      });
    }
  }
}

const URL_OR_ENTITY =
  /(https?:\/\/[^\s<>"']+)|((?:nostr:)?(?:npub|note|nevent|naddr|nprofile)1[02-9ac-hj-np-z]{6,})/gi;

/** Note text with URLs and NIP-19 entities as links (URLs open elsewhere; nothing is loaded). */
export function contentNodes(text: string): Child[] {
  const out: Child[] = [];
  let last = 0;
  for (const m of text.matchAll(URL_OR_ENTITY)) {
    let s = m[0];
    let start = m.index;
    if (m[1]) {
      // Trailing punctuation belongs to the sentence, not the URL.
      s = s.replace(/[.,;:!?)\]}]+$/, "");
      out.push(text.slice(last, start), link(s, s));
    } else {
      const route = routeOf(decodeEntity(s));
      out.push(text.slice(last, start), route ? link(route, s.length > 30 ? `${s.slice(0, 22)}…` : s) : s);
    }
    start += s.length;
    last = start;
  }
  out.push(text.slice(last));
  return out;
}

function time(ev: NostrEvent): HTMLElement {
  const t = h("time", null, ago(ev.created_at));
  t.dateTime = new Date(ev.created_at * 1000).toISOString();
  t.title = new Date(ev.created_at * 1000).toLocaleString();
  return t;
}

/** A note's card; with `counts`, its replies, reposts, reactions and sats under it. */
export function noteCard(ev: NostrEvent, names: Names, counts?: CardFooters): HTMLElement {
  const head = h(
    "header",
    null,
    names.avatar(ev.pubkey),
    names.author(ev.pubkey),
    link(`#/e/${ev.id}`, time(ev)),
    ev.kind === 1 ? null : h("span", { class: "kind" }, `kind ${ev.kind}`),
  );
  const title = ev.tags.find((t) => t[0] === "title")?.[1];
  const body =
    ev.kind === 0
      ? profileSummary(parseProfile(ev.content))
      : h("div", { class: "content" }, ...contentNodes(ev.content));
  return h(
    "article",
    { class: "note", "data-id": ev.id },
    head,
    title ? h("h3", null, title) : null,
    body,
    counts?.footer(ev.id),
  );
}

function profileSummary(p: Profile): HTMLElement {
  return h("div", { class: "content" }, displayName(p) || "(no name)", p.about ? `\n${p.about}` : "");
}

/** NIP-01 order: newer first, then lower id. */
export const newestFirst = (a: NostrEvent, b: NostrEvent): number =>
  b.created_at - a.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export interface ListOptions {
  /** in the order added (a ranked answer), live ones on top */
  ranked?: boolean;
  /** cards kept before the oldest are dropped (200) */
  max?: number;
  emptyText?: string;
  counts?: CardFooters;
  /** told which cards remain when the oldest were dropped */
  onTrim?: (kept: NostrEvent[]) => void;
}

/**
 * A list of event cards: newest first by created_at (ties by id), or in arrival order for a
 * ranked answer; each event once; at most `max` kept beyond the pages loaded.
 */
export class EventList {
  readonly el: HTMLElement;
  private byId = new Map<string, { ev: NostrEvent; node: HTMLElement }>();
  private empty: HTMLElement;
  private max: number;

  constructor(
    private names: Names,
    private opts: ListOptions = {},
  ) {
    this.max = opts.max ?? 200;
    this.empty = h("p", { class: "muted empty" }, "Loading…");
    this.el = h("div", { class: "list" }, this.empty);
  }

  get size(): number {
    return this.byId.size;
  }

  /** After the stored answer: say so when there is nothing. */
  settled(): void {
    this.el.dataset.state = "settled";
    this.empty.textContent = this.opts.emptyText ?? "Nothing here yet.";
    this.empty.hidden = this.byId.size > 0;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** An older page is loaded: it is kept on top of the cards kept so far. */
  grow(n: number): void {
    this.max += n;
  }

  /** Adds a card; false when the event is already listed. */
  add(ev: NostrEvent, live = false): boolean {
    if (this.byId.has(ev.id)) return false;
    const node = noteCard(ev, this.names, this.opts.counts);
    if (live) node.classList.add("fresh");
    this.empty.hidden = true;
    if (this.opts.ranked && !live) this.el.appendChild(node);
    else {
      // Before the first card that sorts after this one (older, or same second and higher id).
      let before: Element | null = null;
      for (const n of this.el.querySelectorAll<HTMLElement>(":scope > .note")) {
        const o = this.byId.get(n.dataset.id ?? "")?.ev;
        if (live && this.opts.ranked) before = n;
        else if (o && (o.created_at < ev.created_at || (o.created_at === ev.created_at && o.id > ev.id)))
          before = n;
        if (before) break;
      }
      this.el.insertBefore(node, before);
    }
    this.byId.set(ev.id, { ev, node });
    if (this.byId.size > this.max) {
      const lastNode = this.el.lastElementChild as HTMLElement | null;
      const id = lastNode?.dataset.id;
      if (id) {
        this.byId.delete(id);
        lastNode.remove();
        this.opts.onTrim?.([...this.byId.values()].map((x) => x.ev));
      }
    }
    return true;
  }
}

export function jsonBlock(ev: NostrEvent): HTMLElement {
  return h("pre", { class: "json" }, JSON.stringify(ev, null, 2));
}
