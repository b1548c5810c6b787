// Seeded PRNG (sfc32) and the few draws the dataset needs, so the same flags give the same events
// on every machine; Math.random would make cached datasets and runs impossible to compare.

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    // splitmix32 spreads a small seed over all four words of state.
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.u32();
  }

  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.u32() / 0x1_0000_0000;
  }

  /** Uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.float() * (hi - lo + 1));
  }

  /** Uniform index in [0, n): the draw `pick` makes, for lists read by index (the notes on disk). */
  index(n: number): number {
    return Math.floor(this.float() * n);
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.index(xs.length)]!;
  }

  /** Skewed pick: low indexes far more likely, like popular authors and tags on real relays. */
  zipf<T>(xs: readonly T[]): T {
    return xs[this.zipfIndex(xs.length)]!;
  }

  zipfIndex(n: number): number {
    return Math.floor(n * this.float() ** 2.5);
  }

  /** `k` distinct elements (k ≤ xs.length). */
  sample<T>(xs: readonly T[], k: number): T[] {
    const out = new Set<T>();
    while (out.size < Math.min(k, xs.length)) out.add(this.pick(xs));
    return [...out];
  }

  /**
   * `k` distinct indexes in [0, n), drawn exactly as `sample` draws from a list of n distinct
   * elements, so a list kept on disk gives the same picks as the same list held in memory.
   */
  sampleIndexes(n: number, k: number): number[] {
    const out = new Set<number>();
    while (out.size < Math.min(k, n)) out.add(this.index(n));
    return [...out];
  }

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.u32() & 0xff;
    return out;
  }

  hex(bytes: number): string {
    return Buffer.from(this.bytes(bytes)).toString("hex");
  }
}

const WORDS = (
  "nostr relay bitcoin lightning zap note client key sign event filter tag thread reply feed follow mute gm " +
  "coffee morning music art photo meme dev code bun lmdb rust typescript design privacy freedom signal network " +
  "market price block node wallet sats pleb build ship test bench fast slow cache index query live fanout"
).split(" ");

/** Text of exactly `bytes` ASCII bytes made of words, so it compresses and tokenises like prose. */
export function prose(rng: Rng, bytes: number): string {
  let s = "";
  while (s.length < bytes) s += (s ? " " : "") + rng.pick(WORDS);
  return s.slice(0, bytes);
}

export const HASHTAGS = WORDS.slice(0, 40);
