// Search matching on one event, for live subscriptions and as the test oracle: the same rules
// as the index (same tokenizer, same fields, every word present, `language:` applied), without
// ranking. An event is tokenized once however many live filters look at it, and a search string
// is parsed once however many events it is checked against.
import type { NostrEvent } from "../nostr/event.ts";
import { eventLanguages, eventTokens } from "./fields.ts";
import type { SearchQuery } from "./parse.ts";
import { parseSearch } from "./parse.ts";

const tokenSets = new WeakMap<NostrEvent, Set<string>>();
const parsed = new Map<string, SearchQuery>();
const MAX_PARSED = 1024;

function parsedSearch(search: string): SearchQuery {
  let q = parsed.get(search);
  if (!q) {
    q = parseSearch(search);
    if (parsed.size >= MAX_PARSED) parsed.delete(parsed.keys().next().value!);
    parsed.set(search, q);
  }
  return q;
}

function tokenSet(e: NostrEvent): Set<string> {
  let set = tokenSets.get(e);
  if (!set) {
    set = new Set(eventTokens(e));
    tokenSets.set(e, set);
  }
  return set;
}

/** True when the event's searchable text holds every word of the search and its extensions pass. */
export function matchSearch(search: string, e: NostrEvent): boolean {
  const q = parsedSearch(search);
  if (q.words.length === 0) return false;
  if (q.languages.length > 0 && !eventLanguages(e).some((l) => q.languages.includes(l))) return false;
  const tokens = tokenSet(e);
  return q.words.every((w) => tokens.has(w));
}
