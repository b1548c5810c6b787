// The rule for kinds served only to their participants (auth.restrictedKinds: DMs, gift wraps):
// an event of such a kind is readable by its author and by the pubkeys it tags with `p`, once
// they have authenticated (NIP-42). One definition for the main thread (ingest/access.ts) and
// the reader threads (worker.ts), which are told the kinds and whom the reader is.
import { storedKind } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";

/** Whether a reader authenticated as `authed` may read `e`. */
export function readable(kinds: readonly number[], authed: ReadonlySet<string>, e: NostrEvent): boolean {
  if (!kinds.includes(e.kind)) return true;
  if (authed.has(e.pubkey)) return true;
  return e.tags.some((t) => t[0] === "p" && t[1] !== undefined && authed.has(t[1]));
}

/** The same rule on stored JSON, parsing only the events of restricted kinds. */
export const readableJson =
  (kinds: readonly number[], authed: ReadonlySet<string>) =>
  (json: string): boolean =>
    !kinds.includes(storedKind(json)) || readable(kinds, authed, JSON.parse(json) as NostrEvent);
