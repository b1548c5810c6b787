// EVENT frames (src/wire/frames.ts): stored JSON spliced behind a prefix vs JSON.stringify, bare and
// with the UTF-8 encoding sending forces (concatenation alone only builds a rope, which is cheap).
import { bench, do_not_optimize, group, run, summary } from "mitata";
import { storedJson } from "../../src/nostr/canonical.ts";
import { eventFrame, eventPrefix } from "../../src/wire/frames.ts";
import { EVENTS, Ring } from "./fixtures.ts";

const SUB = "home-feed:42";
const prefix = eventPrefix(SUB);
const pairs = new Ring(EVENTS.map((e) => ({ e, json: storedJson(e) })));
const out = new Uint8Array(1 << 16);
const enc = new TextEncoder();

// Same bytes either way, or the comparison is between different frames.
for (const { e, json } of pairs.items)
  if (eventFrame(prefix, json) !== JSON.stringify(["EVENT", SUB, e]))
    throw new Error("frames.bench: frames differ");

summary(() => {
  group("EVENT frame: build", () => {
    bench('JSON.stringify(["EVENT", sub, event])', () => {
      const p = pairs.next();
      return do_not_optimize(JSON.stringify(["EVENT", SUB, p.e]));
    }).baseline(true);
    bench("eventFrame(prefix, storedJson)", () => do_not_optimize(eventFrame(prefix, pairs.next().json)));
  });

  group("EVENT frame: build + UTF-8 encode (what send costs)", () => {
    bench('JSON.stringify(["EVENT", sub, event])', () => {
      const p = pairs.next();
      return do_not_optimize(enc.encodeInto(JSON.stringify(["EVENT", SUB, p.e]), out).written);
    }).baseline(true);
    bench("eventFrame(prefix, storedJson)", () =>
      do_not_optimize(enc.encodeInto(eventFrame(prefix, pairs.next().json), out).written),
    );
    bench("eventFrame(eventPrefix(sub), storedJson)", () =>
      do_not_optimize(enc.encodeInto(eventFrame(eventPrefix(SUB), pairs.next().json), out).written),
    );
  });
});

if (import.meta.main) await run();
