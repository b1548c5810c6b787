// What a reader of a consumer sees past its watermark while another process applies the
// consumers: a relay that handed its directory to its successor (`serve --takeover`) serves
// its remaining connections while the successor applies. The runner's generations are empty
// then, so the view comes from the log on disk instead: the events after the watermark and the
// removal records after its own, made into one view the way the runner makes a batch's. The
// view is kept until the watermark or the log moves (between commits, readers share it).
import type { NostrEvent } from "../nostr/event.ts";
import type { Consumer, Tail, Watermark } from "../store/consumer.ts";
import { readU64, serialKey } from "../store/keys.ts";
import { removalsAfter } from "../store/removals.ts";
import { currentHighWater } from "../store/serials.ts";
import type { Store } from "../store/types.ts";
import { viewPart } from "./generation.ts";

export function logTail<V>(s: Store, c: Consumer<unknown, V>): Tail<V> {
  let kept: { key: string; views: V[] } | undefined;
  return {
    views(w: Watermark | undefined): V[] {
      const high = currentHighWater(s);
      const through = w?.serial ?? 0;
      const key = `${through}:${w?.removal ?? -1}:${high.serial}:${high.removal}`;
      if (kept?.key === key) return kept.views;
      const v = c.newView();
      for (const { key: k, value } of s.eventsText.getRange({ start: serialKey(through + 1) })) {
        const json = value as string;
        const p = viewPart(c, JSON.parse(json) as NostrEvent, json);
        if (p !== null) c.view(v, { serial: readU64(k as Buffer, 0), p }, 1, false);
      }
      // A removal undoes only what the entries hold: an event removed after the watermark was
      // never applied, and is gone from the log above.
      if (w)
        for (const r of removalsAfter(s.removals, w.removal)) {
          if (r.serial > through) continue;
          const p = viewPart(c, r.event, r.json);
          if (p !== null) c.view(v, { serial: r.serial, p }, 1, true);
        }
      kept = { key, views: [v] };
      return kept.views;
    },
  };
}
