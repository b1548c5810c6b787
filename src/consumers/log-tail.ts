// What a reader of a consumer sees past its watermark while another process applies the
// consumers: a relay that handed its directory to its successor (`serve --takeover`) serves
// its remaining connections while the successor applies. The runner's generations are empty
// then, so the views come from the log on disk instead, made the way the runner makes a
// batch's: the events after the watermark, and the removal records of events that the entries
// or an earlier view hold.
//
// Like generations, the views are kept and added to: while the watermark stays, what the log
// gained since the last read becomes one more view (a removal in a later view hides an event
// an earlier one holds, as between generations), so a read costs what was committed since the
// last one, not the whole log past the watermark. The watermark moving starts them over.
import type { NostrEvent } from "../nostr/event.ts";
import type { Consumer, Tail, Watermark } from "../store/consumer.ts";
import { readPast } from "../store/past-watermark.ts";
import { readHighWater } from "../store/serials.ts";
import type { Store } from "../store/types.ts";
import { viewPart } from "./generation.ts";

/** Views kept before they are made into one again. */
const MAX_VIEWS = 16;

interface Kept<V> {
  /** the watermark they follow */
  through: number;
  removal: number;
  /** how far the log was read: events up to this serial, removal records up to this seq */
  serialTo: number;
  seqTo: number;
  views: V[];
}

export function logTail<V>(s: Store, c: Consumer<unknown, V>): Tail<V> {
  let kept: Kept<V> | undefined;
  return {
    views(w: Watermark | undefined): V[] {
      // In the read transaction the log is read in below (a reader that wants the latest
      // commits renews it first: ingest/req.ts answerEnd), so both see the same log.
      const high = readHighWater(s);
      const through = w?.serial ?? 0;
      // No watermark: nothing is in the entries, and removed events are gone from the log.
      const removal = w?.removal ?? high.removal;
      if (kept?.through !== through || kept.removal !== removal || kept.views.length >= MAX_VIEWS)
        kept = { through, removal, serialTo: through, seqTo: removal, views: [] };
      else if (kept.serialTo >= high.serial && kept.seqTo >= high.removal) return kept.views;
      const k = kept;
      const v = c.newView();
      // Removals first: an event removed after them is still read below, and its record is
      // read by the next view; one removed before them is gone from the log by then.
      const to = readPast(
        s,
        { serial: k.serialTo, seq: k.seqTo },
        {
          removed: (r) => {
            const p = viewPart(c, r.event, r.json);
            if (p !== null) c.view(v, { serial: r.serial, p }, 1, true);
          },
          added: (serial, json) => {
            const p = viewPart(c, JSON.parse(json) as NostrEvent, json);
            if (p !== null) c.view(v, { serial, p }, 1, false);
          },
        },
      );
      // Serials and seqs the log passed without a record left (removed, trimmed) are covered.
      k.serialTo = Math.max(to.serial, high.serial);
      k.seqTo = Math.max(to.seq, high.removal);
      k.views = [...k.views, v];
      return k.views;
    },
  };
}
