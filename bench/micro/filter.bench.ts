// Filter matching (matchFilter, src/nostr/filter.ts), run per live event per candidate subscription
// and per scanned row the index cannot decide. Baseline: matching the raw wire object directly.
import { bench, do_not_optimize, group, run, summary } from "mitata";
import type { NostrEvent } from "../../src/nostr/event.ts";
import type { Filter } from "../../src/nostr/filter.ts";
import { matchFilter, parseFilter } from "../../src/nostr/filter.ts";
import { isReject } from "../../src/wire/reasons.ts";
import { Rng } from "../load/prng.ts";
import { AUTHORS, EVENTS, Ring, ROOTS } from "./fixtures.ts";

type Wire = Record<string, unknown>;

/** Straight from the wire object: `#x` keys found by iterating entries on every call. */
function naiveMatch(f: Wire, e: NostrEvent): boolean {
  for (const [k, v] of Object.entries(f)) {
    if (k === "ids" && !(v as string[]).includes(e.id)) return false;
    if (k === "authors" && !(v as string[]).includes(e.pubkey)) return false;
    if (k === "kinds" && !(v as number[]).includes(e.kind)) return false;
    if (k === "since" && e.created_at < (v as number)) return false;
    if (k === "until" && e.created_at > (v as number)) return false;
    if (k[0] === "#" && !e.tags.some((t) => t[0] === k[1] && (v as string[]).includes(t[1]!))) return false;
  }
  return true;
}

/** Authors checked in a Set first, the rest by matchFilter: a candidate for 100+ author feeds. */
const setMatch = (rest: Filter, authors: Set<string>, e: NostrEvent): boolean =>
  authors.has(e.pubkey) && matchFilter(rest, e);

const parse = (w: Wire): Filter => {
  const f = parseFilter(w, { maxFilterValues: 1000 });
  if (isReject(f)) throw new Error(`filter.bench: fixture filter does not parse: ${f.message}`);
  return f;
};

const rng = new Rng(7);
// A home feed follows 100 authors, half of them among the most active.
const homeWire: Wire = { authors: rng.sample(AUTHORS.slice(0, 200), 100), kinds: [1, 6], limit: 100 };
const home = parse(homeWire);
const homeSet = new Set(home.authors);
const homeRest: Filter = { ...home, authors: undefined };
const threadWire: Wire = { "#e": [ROOTS[0]!], kinds: [1, 6, 7] };
const thread = parse(threadWire);
const events = new Ring(EVENTS);

// Same verdicts on the whole fixture, or the baseline is not doing the same job.
for (const e of EVENTS)
  if (
    naiveMatch(homeWire, e) !== matchFilter(home, e) ||
    setMatch(homeRest, homeSet, e) !== matchFilter(home, e) ||
    naiveMatch(threadWire, e) !== matchFilter(thread, e)
  )
    throw new Error("filter.bench: matchers disagree");

summary(() => {
  group("match home feed (100 authors + kinds)", () => {
    bench("naive wire-object match", () => do_not_optimize(naiveMatch(homeWire, events.next()))).baseline(
      true,
    );
    bench("matchFilter (parsed)", () => do_not_optimize(matchFilter(home, events.next())));
    bench("authors as Set + matchFilter", () => do_not_optimize(setMatch(homeRest, homeSet, events.next())));
  });

  group("match thread (#e + kinds)", () => {
    bench("naive wire-object match", () => do_not_optimize(naiveMatch(threadWire, events.next()))).baseline(
      true,
    );
    bench("matchFilter (parsed)", () => do_not_optimize(matchFilter(thread, events.next())));
  });
});

if (import.meta.main) await run();
