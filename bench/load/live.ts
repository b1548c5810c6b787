// Live fanout phase: S subscribers hold common filter shapes while a publisher sends fresh events at
// a fixed rate; every expected delivery is timed from publish, and those not seen in time are missed.
import { finalizeEvent } from "nostr-tools/pure";
import type { Catalog, WireFilter } from "./catalog.ts";
import { matchWire } from "./catalog.ts";
import { Client, closeAll, connectMany, signal, within } from "./client.ts";
import type { Dataset, WireEvent } from "./dataset.ts";
import { prose, Rng } from "./prng.ts";
import type { Summary } from "./stats.ts";
import { round, Samples } from "./stats.ts";

export interface LiveOptions {
  subscribers: number;
  events: number;
  /** events published per second */
  rate: number;
  graceMs: number;
  seed: number;
  /** hears each delivery: when its event was published (performance.now()) and its latency */
  sample?: (sentAt: number, ms: number) => void;
}

export interface LiveResult {
  subscribers: number;
  subscribeFailed: number;
  events: number;
  targetRate: number;
  achievedRate: number;
  publishOkMs: Summary;
  /** OK false answers: their deliveries count as missed, so a refusal is not mistaken for loss */
  publishRejected: number;
  expectedDeliveries: number;
  delivered: number;
  missed: number;
  unexpected: number;
  deliveryMs: Summary;
  deliveriesPerSec: number;
}

/**
 * Fresh events (with a per-run nonce) so they are never duplicates of a past run; each is dated
 * the second it is due to be sent at the phase's rate, as a steady stream of clients would
 * date them (one created_at for all would pile thousands of ties into the store's newest second).
 */
function liveEvents(d: Dataset, c: Catalog, o: LiveOptions, now: number): WireEvent[] {
  const rng = new Rng(o.seed ^ 0x11fe);
  const authors = d.authors.slice(0, 50);
  const nonce = crypto.randomUUID().slice(0, 8);
  return Array.from({ length: o.events }, (_, j) => {
    const a = rng.zipf(authors);
    const kind = rng.float() < 0.8 ? 1 : 7;
    const tags: string[][] = [];
    if (kind === 7 || rng.float() < 0.3) tags.push(["e", rng.pick(c.roots.slice(0, 20))]);
    if (rng.float() < 0.5) tags.push(["p", rng.pick(authors).pk]);
    if (kind === 1 && rng.float() < 0.5)
      for (const t of rng.sample(c.hashtags.slice(0, 10), rng.int(1, 2))) tags.push(["t", t]);
    const text = kind === 1 ? `live ${nonce} ${j} ${prose(rng, rng.int(50, 300))}` : `+${nonce}${j}`;
    const created_at = now + Math.floor(j / o.rate);
    const e = finalizeEvent({ kind, created_at, tags, content: text }, Buffer.from(a.sk, "hex"));
    return { id: e.id, pubkey: e.pubkey, created_at, kind, tags, content: text, sig: e.sig };
  });
}

function subscriberFilter(k: number, d: Dataset, c: Catalog, rng: Rng, since: number): WireFilter {
  const pks = d.authors.slice(0, 50).map((a) => a.pk);
  // limit 0 and a recent since: no stored answer, EOSE at once, only live events follow.
  const base = { since, limit: 0 };
  switch (k % 8) {
    case 3:
      return { ...base, kinds: [1] };
    case 4:
    case 5:
      return { ...base, "#t": [rng.pick(c.hashtags.slice(0, 10))] };
    case 6:
      return { ...base, kinds: [1, 7], "#p": [rng.pick(pks)] };
    case 7:
      return { ...base, "#e": [rng.pick(c.roots.slice(0, 20))] };
    default:
      return { ...base, authors: rng.sample(pks, 10) };
  }
}

export async function runLive(url: string, d: Dataset, c: Catalog, o: LiveOptions): Promise<LiveResult> {
  const now = Math.floor(Date.now() / 1000);
  const rng = new Rng(o.seed ^ 0x5ab5);
  const filters = Array.from({ length: o.subscribers }, (_, k) => subscriberFilter(k, d, c, rng, now - 60));
  const events = liveEvents(d, c, o, now);
  const index = new Map(events.map((e, j) => [e.id, j]));
  // expected[j*S + k] = 1 when subscriber k should get event j; 2 once it has.
  const S = o.subscribers;
  const state = new Uint8Array(events.length * S);
  let expected = 0;
  events.forEach((e, j) => {
    for (let k = 0; k < S; k++)
      if (matchWire(filters[k]!, e)) {
        state[j * S + k] = 1;
        expected++;
      }
  });

  const subs = await connectMany(url, S);
  let eosed = 0;
  let subscribeFailed = 0;
  const ready = signal();
  const sentAt = new Float64Array(events.length);
  const delivery = new Samples();
  let delivered = 0;
  let unexpected = 0;
  const allDelivered = signal();
  subs.forEach((s, k) => {
    const settle = () => {
      if (eosed + subscribeFailed === S) ready.fire();
    };
    s.handlers.eose = () => {
      eosed++;
      settle();
    };
    s.handlers.closed = () => {
      subscribeFailed++;
      settle();
    };
    s.handlers.event = (_sub, id) => {
      const j = index.get(id);
      if (j === undefined || state[j * S + k] !== 1) {
        unexpected++;
        return;
      }
      state[j * S + k] = 2;
      const ms = performance.now() - sentAt[j]!;
      delivery.add(ms);
      o.sample?.(sentAt[j]!, ms);
      if (++delivered === expected) allDelivered.fire();
    };
    s.req(`live${k}`, [filters[k]!]);
  });
  await within(ready.promise, 30_000);

  const pub = await Client.connect(url);
  const publishOk = new Samples();
  let oks = 0;
  let publishRejected = 0;
  const allOk = signal();
  pub.handlers.ok = (id, accepted) => {
    const j = index.get(id);
    if (j !== undefined) publishOk.add(performance.now() - sentAt[j]!);
    if (!accepted) publishRejected++;
    if (++oks === events.length) allOk.fire();
  };
  const frames = events.map((e) => `["EVENT",${JSON.stringify(e)}]`);
  const started = performance.now();
  for (let j = 0; j < events.length; j++) {
    // Paced against the start time, so a late timer is caught up rather than drifting.
    const due = started + (j * 1000) / o.rate;
    const wait = due - performance.now();
    if (wait > 1) await Bun.sleep(wait);
    sentAt[j] = performance.now();
    pub.send(frames[j]!);
  }
  const publishSeconds = (performance.now() - started) / 1000;
  await within(allOk.promise, o.graceMs + 30_000);
  if (expected > 0) await within(allDelivered.promise, o.graceMs);
  const seconds = (performance.now() - started) / 1000;
  pub.close();
  closeAll(subs);
  return {
    subscribers: S,
    subscribeFailed,
    events: events.length,
    targetRate: o.rate,
    achievedRate: round(events.length / publishSeconds, 1),
    publishOkMs: publishOk.summary(),
    publishRejected,
    expectedDeliveries: expected,
    delivered,
    missed: expected - delivered,
    unexpected,
    deliveryMs: delivery.summary(),
    deliveriesPerSec: round(delivered / seconds, 1),
  };
}
