// The API's state beside the routes: the counters consumer, the trending window (fed by every commit, relay.ts) and the
// optional relay prober, started once by startRelay.
import type { Config } from "../config/schema.ts";
import type { Consumers } from "../consumers/registry.ts";
import type { EngagementCounters } from "../engagement/counters.ts";
import type { Committed } from "../store/batch.ts";
import type { Removal } from "../store/removals.ts";
import type { Store } from "../store/types.ts";
import { Prober } from "./online.ts";
import { TrendingWindow } from "./trending.ts";

export interface Api {
  counters: EngagementCounters | undefined;
  trending: TrendingWindow | undefined;
  prober: Prober | undefined;
  /** what each commit stored and removed (relay.ts, beside broadcast and the cluster) */
  committed(stored: readonly Committed[], removed: readonly Removal[]): void;
  stop(): void;
}

/** Called once by startRelay after the indexers are registered and before the writer runs. */
export function startApi(c: Config, consumers: Consumers, store: Store): Api {
  const counters = consumers.counters;
  let trending: TrendingWindow | undefined;
  let prober: Prober | undefined;
  if (counters) {
    trending = new TrendingWindow(c["api.trendingWindowSeconds"], counters);
    trending.seed(store);
    if (c["online.probe"]) {
      prober = new Prober(counters.relays, {
        intervalSeconds: c["online.intervalSeconds"],
        concurrency: c["online.concurrency"],
        ratePerSecond: c["online.ratePerSecond"],
        timeoutMs: c["online.timeoutMs"],
        allowPrivate: c["online.allowPrivate"],
      });
      prober.start();
    }
  }
  let stopped = false;
  return {
    counters,
    trending,
    prober,
    committed(stored, removed) {
      if (!stopped) trending?.committed(stored, removed);
    },
    stop() {
      prober?.stop();
      stopped = true;
    },
  };
}

declare module "../context.ts" {
  interface RelayContext {
    /** the HTTP API's trending window and relay prober (src/api/), set by startRelay */
    api?: Api;
  }
}
