// Seeded randomness for property and fuzz tests: the same seed gives the same cases on every
// machine, so a failure prints a seed that reproduces it.

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Gen {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  some<T>(xs: readonly T[], max: number): T[] {
    return Array.from({ length: 1 + this.int(max) }, () => this.pick(xs));
  }
  /** The items in a seeded random order (Fisher–Yates), in place. */
  shuffle<T>(xs: T[]): T[] {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [xs[i], xs[j]] = [xs[j]!, xs[i]!];
    }
    return xs;
  }
  hex(chars: number): string {
    let s = "";
    for (let i = 0; i < chars; i++) s += "0123456789abcdef"[this.int(16)];
    return s;
  }
}
