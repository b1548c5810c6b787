// NIP-10 in the explorer: which note a kind-1 reply answers (its parent, for the thread view) and
// which notes it counts as a reply to (for counts tallied without the API). The counting rule is
// the relay's own (replyTargets in src/engagement/engagement.ts); test/explorer/tally.test.ts
// checks that both agree, since the server module cannot be bundled (see counts/tally.ts).
import type { NostrEvent } from "../../../nostr/event.ts";

const HEX64 = /^[0-9a-f]{64}$/;

/** The `e` tags naming an event by a well-formed id, in order. */
export const eTags = (ev: NostrEvent): string[][] =>
  ev.tags.filter((t) => t[0] === "e" && typeof t[1] === "string" && HEX64.test(t[1]));

const MARKERS = ["root", "reply", "mention"];

export interface ReplyRefs {
  /** the thread's first note */
  root: string;
  /** the note this one answers (the root itself for a direct reply) */
  parent: string;
}

/**
 * The root and parent a kind-1 note names, or undefined when it replies to nothing. Marked tags
 * (preferred): `reply` is the parent, `root` the root; a note with only `root` answers the root;
 * `mention` and unmarked tags in a marked note are citations. Without any marker (the deprecated
 * positional form): the first `e` tag is the root and the last the parent; those between are
 * mentions, and a single tag is both.
 */
export function replyRefs(ev: NostrEvent): ReplyRefs | undefined {
  if (ev.kind !== 1) return undefined;
  const tags = eTags(ev);
  if (tags.length === 0) return undefined;
  if (tags.some((t) => MARKERS.includes(t[3] ?? ""))) {
    const root = tags.find((t) => t[3] === "root")?.[1];
    // NIP-10 allows one `reply`; of several, the last is nearest the positional meaning.
    const reply = tags.findLast((t) => t[3] === "reply")?.[1];
    if (root === undefined && reply === undefined) return undefined;
    return { root: (root ?? reply)!, parent: (reply ?? root)! };
  }
  return { root: tags[0]![1]!, parent: tags[tags.length - 1]![1]! };
}

/**
 * The notes a kind-1 note counts as a reply to, as the relay's counters count them: every `root`
 * and `reply` target of a marked note, or the first and last `e` tag of an unmarked one; each once.
 */
export function replyTargets(ev: NostrEvent): string[] {
  const tags = eTags(ev);
  if (tags.length === 0) return [];
  const marked = tags.some((t) => MARKERS.includes(t[3] ?? ""));
  const ids = marked
    ? tags.filter((t) => t[3] === "root" || t[3] === "reply").map((t) => t[1]!)
    : [tags[0]![1]!, tags[tags.length - 1]![1]!];
  return [...new Set(ids)];
}
