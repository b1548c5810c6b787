// The explorer's main views, one function per route: the latest notes (with the NIP-07 publish
// form), search results, a profile, one event. Each returns the function that closes its
// subscriptions when the route changes.
import { fetchProfile, type ProfileAnswer } from "./api.ts";
import { copyButton, fill, h, link } from "./dom.ts";
import { naddr, nevent, note, npub } from "./entities.ts";
import type { Filter, NostrEvent, RelaySocket } from "./socket.ts";
import { displayName, EventList, jsonBlock, type Names, type Profile, parseProfile } from "./views.ts";

export type Dispose = () => void;

export interface Shell {
  socket: RelaySocket;
  names: Names;
  view: HTMLElement;
  wsUrl: string;
  setTitle(t: string): void;
}

interface Nip07 {
  getPublicKey(): Promise<string>;
  signEvent(t: { kind: number; created_at: number; tags: string[][]; content: string }): Promise<NostrEvent>;
}
const nip07 = (): Nip07 | undefined => (window as unknown as { nostr?: Nip07 }).nostr;
const now = () => Math.floor(Date.now() / 1000);

/** Subscribes `list` to `filters`: stored events, then live ones. */
function feed(s: Shell, list: EventList, filters: Filter[], where: HTMLElement): Dispose {
  let stored = true;
  return s.socket.subscribe(filters, {
    event: (e) => {
      s.names.learn(e);
      list.add(e, !stored);
    },
    eose: () => {
      stored = false;
      list.settled();
    },
    closed: (reason) => {
      list.settled();
      where.append(h("p", { class: "warn" }, `The relay closed this query: ${reason}`));
    },
  });
}

export function home(s: Shell): Dispose {
  s.setTitle("");
  const list = new EventList(s.names, { emptyText: "No notes on this relay yet." });
  const section = h("section", null, h("h2", null, "Latest notes"), list.el);
  fill(s.view, publishForm(s), section);
  return feed(s, list, [{ kinds: [1], limit: 30 }], section);
}

export function search(s: Shell, q: string): Dispose {
  s.setTitle(`Search: ${q}`);
  const list = new EventList(s.names, { ranked: true, emptyText: "No matching events." });
  const section = h("section", null, h("h2", null, "Results for ", h("q", null, q)), list.el);
  fill(s.view, section);
  return feed(s, list, [{ search: q, limit: 20 }], section);
}

export function profile(s: Shell, pubkey: string): Dispose {
  const n = npub(pubkey);
  const head = h("section", { class: "card profile" });
  const list = new EventList(s.names, { emptyText: "No notes from this author here." });
  const notes = h("section", null, h("h2", null, "Notes"), list.el);
  fill(s.view, head, notes);
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
  const subs: Dispose[] = [];
  // The JSON API when this relay has it (counts, relays); the WebSocket for whatever it lacks,
  // and for the author's new notes as they come.
  void fetchProfile(n).then((a) => {
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
      for (const e of a.latest) list.add(e);
      list.settled();
    }
    const filter = a?.latest ? { since: now(), limit: 0 } : { limit: 30 };
    subs.push(feed(s, list, [{ kinds: [1], authors: [pubkey], ...filter }], notes));
  });
  return () => {
    closed = true;
    for (const d of subs) d();
  };
}

function eventDetails(ev: NostrEvent): HTMLElement {
  const codes: [string, string][] = [
    ["note", note(ev.id)],
    ["nevent", nevent(ev.id, ev.pubkey, ev.kind)],
  ];
  const d = ev.tags.find((t) => t[0] === "d")?.[1] ?? "";
  if (ev.kind >= 30000 && ev.kind < 40000) codes.push(["naddr", naddr(ev.kind, ev.pubkey, d)]);
  const dl = h("dl", { class: "facts" });
  for (const [k, v] of codes) {
    const c = h("code", null, v);
    dl.append(
      h("dt", null, k),
      h(
        "dd",
        null,
        c,
        " ",
        copyButton(() => v, c),
      ),
    );
  }
  const details = h(
    "details",
    { class: "card" },
    h("summary", null, "Event JSON and identifiers"),
    dl,
    jsonBlock(ev),
  );
  details.open = true;
  return details;
}

/** One event (by id, or the newest at an address) with its JSON, and the notes replying to it. */
export function single(s: Shell, title: string, filter: Filter): Dispose {
  s.setTitle(title);
  const box = h("section", { class: "event" });
  fill(s.view, box);
  const subs: Dispose[] = [];
  let shown: NostrEvent | undefined;
  const show = (ev: NostrEvent) => {
    for (const d of subs.splice(1)) d();
    shown = ev;
    const one = new EventList(s.names);
    one.add(ev);
    const replies = new EventList(s.names, { emptyText: "No replies here." });
    fill(box, one.el, eventDetails(ev), h("h2", null, "Replies"), replies.el);
    subs.push(feed(s, replies, [{ kinds: [1], "#e": [ev.id], limit: 50 }], box));
  };
  const waiting = h("p", { class: "muted" }, "Loading…");
  box.append(waiting);
  subs.push(
    s.socket.subscribe([filter], {
      event: (ev) => {
        s.names.learn(ev);
        // An addressable event replaced live: show the newer version.
        if (!shown || ev.created_at > shown.created_at) show(ev);
      },
      eose: () => {
        waiting.textContent = "This relay does not have that event.";
      },
      closed: (reason) => {
        waiting.textContent = `The relay closed this query: ${reason}`;
      },
    }),
  );
  return () => {
    for (const d of subs) d();
  };
}

export function notFound(s: Shell, what: string): Dispose {
  s.setTitle("Not found");
  fill(s.view, h("p", { class: "warn" }, what));
  return () => {};
}

// --- publishing through NIP-07 -------------------------------------------------------------------

function publishForm(s: Shell): HTMLElement {
  const text = h("textarea", { "aria-label": "Note text", id: "publish-text" });
  text.placeholder = "Write a note…";
  text.rows = 3;
  const status = h("p", { class: "status", id: "publish-status", "aria-live": "polite" });
  const send = h("button", null, "Sign and publish");
  send.type = "submit";
  const form = h(
    "form",
    { class: "card publish", id: "publish" },
    text,
    h("div", { class: "row" }, send, status),
  );
  const hint = h(
    "p",
    { class: "muted hint" },
    "Install a NIP-07 signer extension to publish from this page.",
  );
  const show = () => {
    form.hidden = !nip07();
    hint.hidden = !form.hidden;
  };
  show();
  // Extensions may inject window.nostr after the page has loaded.
  for (const ms of [300, 1500]) setTimeout(show, ms);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const signer = nip07();
    const content = text.value.trim();
    if (!signer || !content) return;
    send.disabled = true;
    status.className = "status";
    status.textContent = "Waiting for the signer…";
    try {
      const ev = await signer.signEvent({ kind: 1, created_at: now(), tags: [], content });
      status.textContent = "Sending…";
      let [ok, msg] = await s.socket.send(ev);
      if (!ok && msg.startsWith("auth-required:") && (await authenticate(s, signer)))
        [ok, msg] = await s.socket.send(ev);
      status.className = ok ? "status ok" : "status bad";
      status.textContent = ok ? `OK: stored${msg ? ` (${msg})` : ""}` : `Refused: ${msg}`;
      if (ok) text.value = "";
    } catch (err) {
      status.className = "status bad";
      status.textContent = `Not published: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      send.disabled = false;
    }
  });
  return h("div", null, form, hint);
}

/** NIP-42: signs the relay's challenge with the extension; true when the relay accepted it. */
async function authenticate(s: Shell, signer: Nip07): Promise<boolean> {
  if (!s.socket.challenge) return false;
  const ev = await signer.signEvent({
    kind: 22242,
    created_at: now(),
    tags: [
      ["relay", s.wsUrl],
      ["challenge", s.socket.challenge],
    ],
    content: "",
  });
  return (await s.socket.send(ev, "AUTH"))[0];
}
