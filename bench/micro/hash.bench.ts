// Event id hashing (src/nostr/canonical.ts computeId, Bun.CryptoHasher) against @noble/hashes'
// pure-JS sha256, which is what nostr-tools uses. Every EVENT a client sends is hashed once.
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { bench, do_not_optimize, group, run, summary } from "mitata";
import { commitment, computeId } from "../../src/nostr/canonical.ts";
import type { NostrEvent } from "../../src/nostr/event.ts";
import { EVENTS, Ring } from "./fixtures.ts";

const nobleId = (e: NostrEvent): string => bytesToHex(sha256(utf8ToBytes(commitment(e))));
/** The one-shot static form, without allocating a hasher object per event. */
const staticId = (e: NostrEvent): string => Bun.CryptoHasher.hash("sha256", commitment(e), "hex");
const events = new Ring(EVENTS);

for (const e of EVENTS.slice(0, 16))
  if (computeId(e) !== nobleId(e) || staticId(e) !== nobleId(e)) throw new Error("hash.bench: ids differ");

summary(() => {
  group("event id: commitment + sha256 → hex", () => {
    bench("@noble/hashes sha256", () => do_not_optimize(nobleId(events.next()))).baseline(true);
    bench("computeId (new Bun.CryptoHasher)", () => do_not_optimize(computeId(events.next())));
    bench("Bun.CryptoHasher.hash static", () => do_not_optimize(staticId(events.next())));
    bench("commitment() alone (serialisation share)", () => do_not_optimize(commitment(events.next())));
  });
});

if (import.meta.main) await run();
