// The views that list notes, one function per route: the latest notes (with the NIP-07 publish
// form), trending notes, search results, a profile. Every card shows its counts; every list but
// trending pages to older notes. Each returns the function that closes its subscriptions.
import { CardCounts } from "../counts/watch.ts";
import { npub } from "../nostr/entities.ts";
import { displayName, type Profile, parseProfile } from "../nostr/profile.ts";
import { type Counts, fetchProfile, fetchTrending, type ProfileAnswer } from "../relay/api.ts";
import type { Filter, NostrEvent } from "../relay/socket.ts";
import { copyButton, fill, h, link } from "../render/dom.ts";
import { EventList } from "../render/views.ts";
import { olderButton, SearchPages, TimeCursor } from "./older.ts";
import { publishForm } from "./publish.ts";
import { type Dispose, feed, PAGE, type Shell } from "./shell.ts";

/** Latest and Trending, above the notes of the home view and of the trending view. */
function tabs(current: "latest" | "trending"): HTMLElement {
  const tab = (name: typeof current, href: string, label: string) => {
    const a = link(href, label);
    if (name === current) a.setAttribute("aria-current", "page");
    return a;
  };
  return h(
    "nav",
    { class: "tabs" },
    tab("latest", "#/", "Latest"),
    tab("trending", "#/trending", "Trending"),
  );
}

/**
 * A time-ordered list with its counts and an "Older" button: the first page from `filter` over
 * the stream (stored, then live), older pages `until` the oldest shown.
 */
function pagedFeed(s: Shell, title: Node, filter: Filter, emptyText: string) {
  const counts = new CardCounts(s.socket, s.maxLimit);
  const cursor = new TimeCursor();
  const list = new EventList(s.names, { emptyText, counts, onTrim: (kept) => cursor.reset(kept) });
  const older = olderButton("Older notes", async () => {
    const page = await cursor.next(s, filter, PAGE);
    list.grow(page.events.length);
    for (const e of page.events) list.add(e);
    await counts.page(page.events.map((e) => e.id));
    return page.end;
  });
  older.hidden = true;
  const section = h("section", null, title, list.el, older);
  /** the first page is in: stored notes of the stream, or an API answer with their counts */
  const first = (events: NostrEvent[], known?: ReadonlyMap<string, Counts>) => {
    cursor.seen(events);
    older.hidden = false;
    if (events.length < PAGE) older.finish();
    void counts.page(
      events.map((e) => e.id),
      known,
    );
  };
  const live = (ev: NostrEvent) => counts.add(ev.id);
  return { counts, list, section, first, live };
}

export function home(s: Shell): Dispose {
  s.setTitle("");
  const filter = { kinds: [1] };
  const p = pagedFeed(s, h("h2", null, "Latest notes"), filter, "No notes on this relay yet.");
  fill(s.view, tabs("latest"), publishForm(s), p.section);
  const close = feed(s, p.list, [{ ...filter, limit: PAGE }], p.section, { stored: p.first, live: p.live });
  return () => {
    close();
    p.counts.close();
  };
}

export function trending(s: Shell): Dispose {
  s.setTitle("Trending");
  const counts = new CardCounts(s.socket, s.maxLimit);
  const list = new EventList(s.names, { ranked: true, counts, emptyText: "Nothing has engagement yet." });
  const section = h("section", null, h("h2", null, "Trending notes"), list.el);
  fill(s.view, tabs("trending"), section);
  let closed = false;
  // Ranking needs the counters of every recent note: only the API has them, the WebSocket not.
  void fetchTrending(PAGE).then((t) => {
    if (closed) return;
    if (!t) {
      list.settled();
      section.append(
        h(
          "p",
          { class: "muted" },
          "Trending needs this relay's HTTP API (/v0/trending/notes), which is off.",
        ),
      );
      return;
    }
    for (const e of t.events) {
      s.names.learn(e);
      list.add(e);
    }
    list.settled();
    void counts.page(
      t.events.map((e) => e.id),
      t.counts,
    );
  });
  return () => {
    closed = true;
    counts.close();
  };
}

export function search(s: Shell, q: string): Dispose {
  s.setTitle(`Search: ${q}`);
  const counts = new CardCounts(s.socket, s.maxLimit);
  const list = new EventList(s.names, { counts, emptyText: "No matching events." });
  const pages = new SearchPages(s, { search: q });
  const more = async () => {
    const page = await pages.next(PAGE);
    list.grow(page.events.length);
    for (const e of page.events) list.add(e);
    list.settled();
    await counts.page(page.events.map((e) => e.id));
    return page.end;
  };
  const older = olderButton("Older matches", more);
  older.hidden = true;
  const section = h("section", null, h("h2", null, "Results for ", h("q", null, q)), list.el, older);
  fill(s.view, section);
  let closed = false;
  void more().then((end) => {
    if (closed) return;
    older.hidden = false;
    if (end) older.finish();
  });
  // New matches as the relay stores them, above the pages.
  const live = s.socket.subscribe([{ search: q, limit: 0 }], {
    event: (e) => {
      s.names.learn(e);
      if (list.add(e, true)) counts.add(e.id);
    },
  });
  return () => {
    closed = true;
    live();
    counts.close();
  };
}

export function profile(s: Shell, pubkey: string): Dispose {
  const n = npub(pubkey);
  const head = h("section", { class: "card profile" });
  const filter = { kinds: [1], authors: [pubkey] };
  const notes = pagedFeed(s, h("h2", null, "Notes"), filter, "No notes from this author here.");
  fill(s.view, head, notes.section);
  let api: ProfileAnswer | undefined;
  let prof: Profile | null = null;
  const paint = () => {
    const p = prof ?? {};
    const name = displayName(p) || "(no name)";
    s.setTitle(name);
    const facts = h("dl", { class: "facts" });
    const fact = (k: string, v: Node | string) => facts.append(h("dt", null, k), h("dd", null, v));
    if (p.nip05) fact("nip05", `${p.nip05} (not verified)`);
    if (p.website && /^https?:\/\//i.test(p.website)) fact("website", link(p.website, p.website));
    if (api) {
      for (const [label, v] of [
        ["notes", api.notes],
        ["follows", api.follows],
        ["followers", api.followers],
      ] as const)
        if (v !== undefined) fact(label, v.toLocaleString());
      for (const r of api.relays)
        fact("relay", `${r.url}${r.read && !r.write ? " (read)" : !r.read && r.write ? " (write)" : ""}`);
    }
    const code = h("code", null, n);
    fill(
      head,
      h(
        "div",
        { class: "who" },
        s.names.avatar(pubkey, true),
        h(
          "div",
          null,
          h("h2", null, name),
          h(
            "p",
            { class: "npub" },
            code,
            " ",
            copyButton(() => n, code),
          ),
        ),
      ),
      p.about ? h("p", { class: "about" }, p.about) : null,
      facts,
    );
  };
  paint();
  let closed = false;
  const subs: Dispose[] = [() => notes.counts.close()];
  // The JSON API when this relay has it (counts, relays); the WebSocket for whatever it lacks,
  // and for the author's new notes as they come.
  void fetchProfile(n, PAGE).then((a) => {
    if (closed) return;
    api = a;
    if (a?.profile !== undefined) prof = a.profile;
    paint();
    if (a?.profile === undefined)
      subs.push(
        s.socket.subscribe([{ kinds: [0], authors: [pubkey], limit: 1 }], {
          event: (ev) => {
            s.names.learn(ev);
            prof = parseProfile(ev.content);
            paint();
          },
        }),
      );
    if (a?.latest) {
      for (const e of a.latest) notes.list.add(e);
      notes.list.settled();
      notes.first(a.latest, a.counts);
    }
    // With the API's first page, only what comes next; else the first page too.
    const stream = a?.latest ? { live: notes.live } : { stored: notes.first, live: notes.live };
    const limit = a?.latest ? 0 : PAGE;
    subs.push(feed(s, notes.list, [{ ...filter, limit }], notes.section, stream));
  });
  return () => {
    closed = true;
    for (const d of subs) d();
  };
}

export function notFound(s: Shell, what: string): Dispose {
  s.setTitle("Not found");
  fill(s.view, h("p", { class: "warn" }, what));
  return () => {};
}
