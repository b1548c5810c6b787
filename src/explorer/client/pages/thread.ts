// One event and its conversation: the notes above it (its NIP-10 parent, the parent's parent, up
// to the root), the event with its identifiers and JSON, and the replies below it as a tree, each
// card with its counts. Replies come in pages of the notes that name the event (newest first,
// "Older replies" for more); what hangs below them without naming the event (a reply to a reply
// names the root and its parent) is fetched level by level.
import { CardCounts } from "../counts/watch.ts";
import { naddr, nevent, note } from "../nostr/entities.ts";
import { replyRefs } from "../nostr/nip10.ts";
import type { Filter, NostrEvent } from "../relay/socket.ts";
import { copyButton, fill, h, link } from "../render/dom.ts";
import { jsonBlock, newestFirst, noteCard } from "../render/views.ts";
import { type OlderButton, olderButton, TimeCursor } from "./older.ts";
import { type Dispose, fetchOnce, PAGE, type Shell } from "./shell.ts";

/** How far up a parent chain is followed, and how many levels below a page are fetched. */
const MAX_UP = 50;
const MAX_DOWN = 8;
/** A relay refuses filters with more values than this (limits.maxFilterValues, by default). */
const FILTER_VALUES = 1000;

/** One event (by id, or the newest at an address) with its thread. */
export function thread(s: Shell, title: string, filter: Filter): Dispose {
  s.setTitle(title);
  const box = h("section", { class: "event" });
  const waiting = h("p", { class: "muted" }, "Loading…");
  fill(s.view, box, waiting);
  let shown: Thread | undefined;
  const close = s.socket.subscribe([filter], {
    event: (ev) => {
      s.names.learn(ev);
      // An addressable event replaced live: show the newer version.
      if (shown && ev.created_at <= shown.focus.created_at) return;
      shown?.close();
      waiting.remove();
      shown = new Thread(s, box, ev);
    },
    eose: () => {
      waiting.textContent = "This relay does not have that event.";
    },
    closed: (reason) => {
      waiting.textContent = `The relay closed this query: ${reason}`;
    },
  });
  return () => {
    close();
    shown?.close();
  };
}

interface Node {
  ev: NostrEvent;
  /** the list of its replies */
  kids: HTMLOListElement;
  depth: number;
}

class Thread {
  private readonly counts: CardCounts;
  private readonly nodes = new Map<string, Node>();
  /** replies in this thread whose parent is not loaded yet, by that parent's id */
  private readonly orphans = new Map<string, NostrEvent[]>();
  /** parents asked of the relay by id */
  private readonly asked = new Set<string>();
  private readonly cursor = new TimeCursor();
  private readonly up = h("ol", { class: "ancestors" });
  private readonly replies = h("ol", { class: "replies", "data-state": "loading" });
  private readonly none = h("p", { class: "muted empty" }, "No replies here.");
  private readonly older: OlderButton;
  private closed = false;

  constructor(
    private readonly s: Shell,
    box: HTMLElement,
    readonly focus: NostrEvent,
  ) {
    this.counts = new CardCounts(s.socket, s.maxLimit);
    this.counts.onLive = (ev) => this.heard(ev);
    this.nodes.set(focus.id, { ev: focus, kids: this.replies, depth: 0 });
    const card = noteCard(focus, s.names, this.counts);
    card.classList.add("focus");
    this.older = olderButton("Older replies", () => this.more());
    this.older.hidden = true;
    this.none.hidden = true;
    fill(box, this.up, card, details(focus), h("h2", null, "Replies"), this.replies, this.none, this.older);
    void this.start();
  }

  close(): void {
    this.closed = true;
    this.counts.close();
  }

  /** The chain above and the first page below, then their counts in one request. */
  private async start(): Promise<void> {
    const [above, below] = await Promise.all([this.ancestors(), this.page()]);
    if (this.closed) return;
    this.replies.dataset.state = "settled";
    this.none.hidden = this.nodes.size > 1;
    this.older.hidden = false;
    if (below.end) this.older.finish();
    await this.counts.page([...above, this.focus.id, ...below.added]);
  }

  private async more(): Promise<boolean> {
    const below = await this.page();
    await this.counts.page(below.added);
    return below.end;
  }

  /**
   * The parent chain, nearest first as fetched and shown root first; a note the relay does not
   * have ends it with a line saying so (and the root above, when that is known). Answers the
   * ids of the notes shown.
   */
  private async ancestors(): Promise<string[]> {
    const got = new Map<string, NostrEvent>();
    const chain: (NostrEvent | string)[] = [];
    let refs = replyRefs(this.focus);
    const seen = new Set([this.focus.id]);
    for (let step = 0; refs && step < MAX_UP; step++) {
      const want = [refs.parent, refs.root].filter((id) => !got.has(id));
      if (want.length > 0) for (const e of await fetchOnce(this.s, [{ ids: want }])) got.set(e.id, e);
      const parent = got.get(refs.parent);
      if (!parent || seen.has(parent.id)) {
        if (!parent) chain.push(refs.parent);
        if (refs.root !== refs.parent) chain.push(got.get(refs.root) ?? refs.root);
        break;
      }
      seen.add(parent.id);
      chain.push(parent);
      if (parent.id === refs.root) break;
      refs = replyRefs(parent);
    }
    if (this.closed) return [];
    chain.reverse();
    for (const item of chain)
      this.up.append(
        typeof item === "string"
          ? h(
              "li",
              { class: "missing" },
              h(
                "p",
                { class: "muted" },
                "A note this relay does not have: ",
                link(`#/e/${item}`, note(item)),
              ),
            )
          : h("li", { "data-id": item.id }, noteCard(item, this.s.names, this.counts)),
      );
    return chain.filter((x): x is NostrEvent => typeof x !== "string").map((e) => e.id);
  }

  /** The next page of notes naming this event, placed in the tree with what hangs below them. */
  private async page(): Promise<{ added: string[]; end: boolean }> {
    const p = await this.cursor.next(this.s, { kinds: [1], "#e": [this.focus.id] }, PAGE);
    const added: string[] = [];
    for (const ev of p.events) this.place(ev, added, true);
    await this.parents(added);
    await this.below(added);
    return { added, end: p.end };
  }

  /**
   * Puts a reply under its parent when that is in the tree. A reply naming this event as its
   * root whose parent is not loaded yet waits for it (`wait`).
   */
  private place(ev: NostrEvent, added: string[], wait: boolean): void {
    const refs = replyRefs(ev);
    if (!refs || this.nodes.has(ev.id)) return;
    if (this.nodes.has(refs.parent)) {
      this.insert(ev, refs.parent, added);
      return;
    }
    if (!wait || refs.root !== this.focus.id) return;
    const list = this.orphans.get(refs.parent) ?? [];
    if (!list.some((e) => e.id === ev.id)) list.push(ev);
    this.orphans.set(refs.parent, list);
  }

  private insert(ev: NostrEvent, parentId: string, added: string[], missing = false): void {
    const parent = this.nodes.get(parentId)!;
    const kids = h("ol", { class: "kids" });
    const depth = parent.depth + 1;
    const card = noteCard(ev, this.s.names, this.counts);
    const li = h(
      "li",
      { class: "reply", "data-id": ev.id, "data-depth": String(depth) },
      missing ? h("p", { class: "muted gap" }, "In reply to a note this relay does not have") : null,
      card,
      kids,
    );
    // Newest first among siblings, as every list here.
    let before: Element | null = null;
    for (const sib of parent.kids.children) {
      const other = this.nodes.get((sib as HTMLElement).dataset.id ?? "")?.ev;
      if (other && newestFirst(ev, other) < 0) {
        before = sib;
        break;
      }
    }
    parent.kids.insertBefore(li, before);
    this.nodes.set(ev.id, { ev, kids, depth });
    added.push(ev.id);
    const waiting = this.orphans.get(ev.id);
    this.orphans.delete(ev.id);
    for (const w of waiting ?? []) this.insert(w, ev.id, added);
  }

  /**
   * The parents replies are waiting for, fetched by id (and theirs in turn); replies whose
   * parent the relay does not have go directly under this event, marked so.
   */
  private async parents(added: string[]): Promise<void> {
    for (let round = 0; round < MAX_UP && !this.closed; round++) {
      const want = [...this.orphans.keys()].filter((id) => !this.asked.has(id));
      if (want.length === 0) break;
      for (const id of want) this.asked.add(id);
      for (const ev of await fetchOnce(this.s, [{ ids: want }])) this.place(ev, added, true);
    }
    for (const [parent, waiting] of this.orphans) {
      if (!this.asked.has(parent)) continue;
      this.orphans.delete(parent);
      for (const ev of waiting) this.insert(ev, this.focus.id, added, true);
    }
  }

  /** Replies to the notes just added that do not name this event, level by level. */
  private async below(added: string[]): Promise<void> {
    let level = [...added];
    for (let depth = 0; depth < MAX_DOWN && level.length > 0 && !this.closed; depth++) {
      const next: string[] = [];
      for (let i = 0; i < level.length; i += FILTER_VALUES) {
        const filter = { kinds: [1], "#e": level.slice(i, i + FILTER_VALUES), limit: this.s.maxLimit };
        for (const ev of await fetchOnce(this.s, [filter])) this.place(ev, next, false);
      }
      added.push(...next);
      level = next;
    }
  }

  /** A live reply to a note in the tree joins it. */
  private heard(ev: NostrEvent): void {
    if (this.closed) return;
    const added: string[] = [];
    this.place(ev, added, false);
    for (const id of added) {
      this.replies.querySelector(`li[data-id="${CSS.escape(id)}"] > .note`)?.classList.add("fresh");
      this.counts.add(id);
    }
    if (added.length > 0) this.none.hidden = true;
  }
}

/** The event's NIP-19 identifiers (with copy buttons) and its JSON, folded. */
function details(ev: NostrEvent): HTMLElement {
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
  return h("details", { class: "card" }, h("summary", null, "Event JSON and identifiers"), dl, jsonBlock(ev));
}
