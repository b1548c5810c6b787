// Token buckets per connection and per IP address for EVENT, REQ and COUNT, and a cap on
// connections per IP. Everything is off (unlimited) by default, so a benchmark on loopback is
// never throttled; exempt IPs and authenticated pubkeys skip every bucket.
import type { Config } from "../config/schema.ts";

export type Metered = "EVENT" | "REQ" | "COUNT";

const RATE_KEYS: Record<Metered, [perConn: keyof Config, perIp: keyof Config]> = {
  EVENT: ["rate.eventsPerSecond", "rate.eventsPerSecondPerIp"],
  REQ: ["rate.reqsPerSecond", "rate.reqsPerSecondPerIp"],
  COUNT: ["rate.countsPerSecond", "rate.countsPerSecondPerIp"],
};

export class Bucket {
  private tokens: number;
  private last = performance.now();
  constructor(
    readonly rate: number,
    readonly capacity: number,
  ) {
    this.tokens = capacity;
  }
  take(now = performance.now()): boolean {
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** The buckets one holder (a connection or an IP) has, created lazily at the configured rate. */
export class Meter {
  private buckets: Partial<Record<Metered, Bucket>> = {};
  take(verb: Metered, rate: number, burstSeconds: number): boolean {
    if (rate <= 0) return true;
    let b = this.buckets[verb];
    if (!b || b.rate !== rate || b.capacity !== rate * burstSeconds)
      b = this.buckets[verb] = new Bucket(rate, rate * burstSeconds);
    return b.take();
  }
}

interface IpState {
  conns: number;
  meter: Meter;
  lastSeen: number;
}

export class RateLimiter {
  private readonly ips = new Map<string, IpState>();

  constructor(
    private readonly config: () => Config,
    /** rate.exemptIps as the server matches addresses (IPs and CIDR ranges) */
    private readonly exempt: (ip: string) => boolean = (ip) => config()["rate.exemptIps"].includes(ip),
  ) {}

  private ip(ip: string): IpState {
    let s = this.ips.get(ip);
    if (!s) {
      s = { conns: 0, meter: new Meter(), lastSeen: Date.now() };
      this.ips.set(ip, s);
    }
    s.lastSeen = Date.now();
    return s;
  }

  /** Registers a new connection; false when the IP already has as many as allowed. */
  connect(ip: string): boolean {
    const c = this.config();
    const s = this.ip(ip);
    const max = c["rate.maxConnectionsPerIp"];
    if (max > 0 && s.conns >= max && !this.exempt(ip)) return false;
    s.conns++;
    return true;
  }

  disconnect(ip: string): void {
    const s = this.ips.get(ip);
    if (s) s.conns = Math.max(0, s.conns - 1);
  }

  /** Takes a token for one frame from the connection's and its IP's buckets. */
  take(verb: Metered, ip: string, connMeter: Meter, authed: ReadonlySet<string>): boolean {
    const c = this.config();
    const [perConn, perIp] = RATE_KEYS[verb];
    // The default: no limits, so nothing to look up (this runs for every frame).
    if (c[perConn] === 0 && c[perIp] === 0) return true;
    if (c["rate.exemptIps"].length > 0 && this.exempt(ip)) return true;
    if (authed.size > 0 && c["rate.exemptPubkeys"].some((pk) => authed.has(pk))) return true;
    const burst = c["rate.burstSeconds"];
    return (
      connMeter.take(verb, c[perConn] as number, burst) &&
      this.ip(ip).meter.take(verb, c[perIp] as number, burst)
    );
  }

  /** Forgets idle IPs with no connections (their buckets would be full again anyway). */
  sweep(olderThanMs = 10 * 60_000): void {
    const cutoff = Date.now() - olderThanMs;
    for (const [ip, s] of this.ips) if (s.conns === 0 && s.lastSeen < cutoff) this.ips.delete(ip);
  }
}

declare module "../context.ts" {
  interface RelayContext {
    /** the rate limits per connection and per address */
    rates: RateLimiter;
  }
}
