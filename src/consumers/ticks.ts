// When the runner applies while it runs: every `intervalMs`, and as soon as commits pause for
// `idleMs` (so what readers must match outside the indexes shrinks as soon as a burst ends).
export class Ticks {
  private timer: ReturnType<typeof setInterval> | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** when the last commit arrived (performance.now() ms) */
  lastCommitAt = 0;

  constructor(
    private readonly intervalMs: number,
    private readonly idleMs: number,
    /** every interval: apply the open batch */
    private readonly tick: () => void,
    /** after a pause in commits: apply the open batch */
    private readonly quiet: () => void,
  ) {}

  /** Whether the interval runs (the runner was started and not stopped). */
  get running(): boolean {
    return this.timer !== undefined;
  }

  start(): void {
    this.timer ??= setInterval(this.tick, this.intervalMs);
  }

  /** Applies once commits pause for `idleMs` (checked, not re-armed per commit). */
  armIdle(): void {
    if (this.idleMs <= 0 || this.idleTimer || !this.timer) return;
    const check = () => {
      const quiet = performance.now() - this.lastCommitAt;
      if (quiet < this.idleMs) {
        this.idleTimer = setTimeout(check, this.idleMs - quiet);
        return;
      }
      this.idleTimer = undefined;
      this.quiet();
    };
    this.idleTimer = setTimeout(check, this.idleMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }
}
