// A search's candidates: documents that hold every word, with their scores, and how the best
// of them are picked (selection, not a sort of all of them).

/** A copy of `a` twice as long: the parallel arrays of a search grow this way. */
export function grown(a: Float64Array): Float64Array<ArrayBuffer> {
  const b = new Float64Array(a.length * 2);
  b.set(a);
  return b;
}

/**
 * The best `k` scores offered so far, as a min-heap: `floor` is the lowest of them once there
 * are `k` (before that −∞), so a score below it cannot be among the best `k`. Both walks keep
 * one (the candidates that can rank, and the high lists' cut).
 */
export class BestScores {
  floor = Number.NEGATIVE_INFINITY;
  private k = 0;
  private heap = new Float64Array(0);
  private n = 0;

  /** Starts over for the best `k` (0: the floor stays −∞). */
  reset(k: number): void {
    this.k = k;
    this.n = 0;
    this.floor = Number.NEGATIVE_INFINITY;
    if (this.heap.length < k) this.heap = new Float64Array(k);
  }

  get size(): number {
    return this.k;
  }

  offer(score: number): void {
    const h = this.heap;
    if (this.n < this.k) {
      // sift up
      let i = this.n++;
      while (i > 0) {
        const up = (i - 1) >> 1;
        if (h[up]! <= score) break;
        h[i] = h[up]!;
        i = up;
      }
      h[i] = score;
      if (this.n === this.k) this.floor = h[0]!;
      return;
    }
    if (this.k === 0 || score <= h[0]!) return;
    // replace the lowest, sift down
    const n = this.n;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const m = r < n && h[r]! < h[l]! ? r : l;
      if (h[m]! >= score) break;
      h[i] = h[m]!;
      i = m;
    }
    h[i] = score;
    this.floor = h[0]!;
  }
}

/**
 * Candidates as parallel typed arrays, ascending by serial; `n` of them are set. Searches take
 * them from a small pool and give them back: allocating tens of kilobytes of typed arrays per
 * search (growing as it goes) cost more than the search itself until the JIT warmed up, and
 * kept the collector busy after.
 */
export class Candidates {
  private static readonly pool: Candidates[] = [];
  n = 0;
  serial = new Float64Array(1024);
  time = new Float64Array(1024);
  score = new Float64Array(1024);
  /** room for a copy of the scores or times, for selection */
  scratch = new Float64Array(1024);

  /** the best scores pushed so far, when only the best are kept (keepBest) */
  private readonly best = new BestScores();

  /**
   * Scores below this cannot be among the best kept: push() drops them, and a walk may skip a
   * match scoring below it before reading anything else of it.
   */
  get floor(): number {
    return this.best.floor;
  }

  /** how many of the best are kept (0: all), for a walk that fills another thread's Candidates */
  get keeping(): number {
    return this.best.size;
  }

  static take(): Candidates {
    const c = Candidates.pool.pop() ?? new Candidates();
    c.n = 0;
    c.best.reset(0);
    return c;
  }

  /**
   * Keeps only candidates that can be among the best `keep` by score (0: all of them). Those
   * tied with the floor stay, so rankOrder(c, keep) picks from what is kept exactly what it
   * would pick from every match: a two-word search at 50k events matches ~9,000 documents and
   * ranks 56, and pushing and selecting among all of them cost a fifth of its time.
   */
  keepBest(keep: number): void {
    this.best.reset(keep);
  }

  /** Back to the pool (a few, and none that grew past a few megabytes). */
  release(): void {
    if (Candidates.pool.length < 8 && this.serial.length <= 1 << 17) Candidates.pool.push(this);
  }

  push(serial: number, time: number, score: number): void {
    const best = this.best;
    if (score < best.floor) return;
    best.offer(score);
    if (this.n === this.serial.length) {
      this.serial = grown(this.serial);
      this.time = grown(this.time);
      this.score = grown(this.score);
      this.scratch = new Float64Array(this.score.length);
    }
    this.serial[this.n] = serial;
    this.time[this.n] = time;
    this.score[this.n++] = score;
  }
}

/**
 * The value that would be at `at` if `a` (which is reordered) were sorted ascending: Hoare's
 * selection, linear on average, where a full sort of thousands of scores per search was not.
 */
export function select(a: Float64Array, at: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    // Median of three as the pivot keeps sorted and reversed input linear.
    const x = a[lo]!;
    const y = a[mid]!;
    const z = a[hi]!;
    const pivot = Math.max(Math.min(x, y), Math.min(Math.max(x, y), z));
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i++] = a[j]!;
        a[j--] = t;
      }
    }
    if (at <= j) hi = j;
    else if (at >= i) lo = i;
    else return a[at]!;
  }
  return a[at]!;
}

/**
 * Candidate positions in rank order: score, then newer, then higher serial (the final order
 * breaks ties by id). When only the best `need` can be results, the rest are not sorted: every
 * candidate scoring above the need-th best score is kept, and of those tied with it the newest,
 * down to the created_at that fills `need`, with its own ties.
 */
export function rankOrder(c: Candidates, need: number): number[] {
  const n = c.n;
  const keep: number[] = [];
  if (n <= need * 2 + 64) for (let k = 0; k < n; k++) keep.push(k);
  else {
    const scores = c.scratch.subarray(0, n);
    scores.set(c.score.subarray(0, n));
    const kth = select(scores, n - need);
    const tied: number[] = [];
    for (let k = 0; k < n; k++) {
      const score = c.score[k]!;
      if (score > kth) keep.push(k);
      else if (score === kth) tied.push(k);
    }
    const room = need - keep.length;
    if (tied.length <= room) keep.push(...tied);
    else {
      const cut = select(
        Float64Array.from(tied, (k) => c.time[k]!),
        tied.length - room,
      );
      for (const k of tied) if (c.time[k]! >= cut) keep.push(k);
    }
  }
  return keep.sort(
    (a, b) => c.score[b]! - c.score[a]! || c.time[b]! - c.time[a]! || c.serial[b]! - c.serial[a]!,
  );
}

/** The limit-th best score among the candidates, or -Infinity when there are fewer. */
export function kthScore(c: Candidates, limit: number): number {
  if (c.n < limit) return Number.NEGATIVE_INFINITY;
  const scores = c.scratch.subarray(0, c.n);
  scores.set(c.score.subarray(0, c.n));
  return select(scores, c.n - limit);
}
