// The running relay's side of a handover. On SIGUSR2 it reads the request beside the lock:
//   - a successor asks (`serve --takeover`, not listening yet): hand the directory over (the
//     relay applies what waits, stops applying and releases the lock; it still accepts and
//     serves) and watch the successor: if it dies before it listens, take the directory back;
//   - the successor listens on the shared port: stop accepting and drain: serve the open
//     connections (their REQs from LMDB, their subscriptions with what either process stores,
//     their EVENTs written beside the successor) until they close or `server.drainSeconds`
//     pass, then close what is left with a NOTICE and a normal close, and exit;
//   - no request (`relay upgrade`, or the signal sent by hand): start this program again from
//     its file on disk with --takeover, which then asks as above.
import { spawn } from "node:child_process";
import type { RelayContext } from "../context.ts";
import { processAlive } from "../lmdb/lock.ts";
import { log } from "../log.ts";
import { runByAnotherProgram } from "../platform.ts";
import { noticeFrame } from "../wire/frames.ts";
import { ownCommandLine } from "./command-line.ts";
import type { TakeoverRequest } from "./files.ts";
import { DRAINING_FILE, REQUEST_FILE, readState, removeState, writeState } from "./files.ts";

/** How often a draining relay looks for the successor's commits (its subscribers wait on it). */
export const FOLLOW_MS = 20;
/** Connections closed at the drain's end get this long to go before the process exits anyway. */
const CLOSE_GRACE_MS = 5000;
const TICK_MS = 250;
const LOG_EVERY_MS = 10_000;

/** What a handover asks of the running relay (relay.ts's Relay). */
export interface HandingOver {
  ctx: RelayContext;
  handOver(): Promise<void>;
  takeBack(): Promise<void>;
  stopAccepting(): Promise<void>;
  followEvery(ms: number): void;
}

export class Predecessor {
  private successor: number | undefined;
  private watch: ReturnType<typeof setInterval> | undefined;
  private ticking: ReturnType<typeof setInterval> | undefined;
  private busy = false;
  /** a signal came while a step ran */
  private again = false;
  /** the process an upgrade started */
  private started: number | undefined;

  constructor(
    private readonly relay: HandingOver,
    /** stops the relay and ends the process */
    private readonly exit: (why: string) => Promise<void>,
  ) {}

  private get dir(): string {
    return this.relay.ctx.config.data;
  }

  /** SIGUSR2 came (or the watch looks again). */
  signalled(): void {
    if (this.relay.ctx.draining) return;
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    this.step()
      .catch((e: unknown) => log.error("handover failed", { error: (e as Error).message }))
      .finally(() => {
        this.busy = false;
        if (!this.again) return;
        this.again = false;
        this.signalled();
      });
  }

  private async step(): Promise<void> {
    const r = readState<TakeoverRequest>(this.dir, REQUEST_FILE);
    if (!r || r.pid === process.pid || !processAlive(r.pid)) {
      if (this.successor === undefined) this.upgrade();
      return;
    }
    if (this.successor === undefined && !r.listening) {
      this.successor = r.pid;
      log.info("handing the data directory over", { to: r.pid });
      this.relay.ctx.peer = r.pid;
      await this.relay.handOver();
      this.watch = setInterval(() => void this.watchSuccessor(), TICK_MS);
      return;
    }
    if (r.listening && r.pid === this.successor) this.drain();
  }

  /**
   * Between the handover and the successor's listening: a signal that was missed is read from
   * the request file; a successor that died before it listened leaves the directory to this
   * relay again.
   */
  private async watchSuccessor(): Promise<void> {
    if (this.successor === undefined || this.busy) return;
    if (processAlive(this.successor)) {
      if (readState<TakeoverRequest>(this.dir, REQUEST_FILE)?.listening) this.signalled();
      return;
    }
    clearInterval(this.watch);
    log.warn("the relay taking over is gone before it listened; taking the data directory back", {
      pid: this.successor,
    });
    this.busy = true;
    try {
      await this.relay.takeBack();
      removeState(this.dir, REQUEST_FILE, this.successor);
      this.successor = undefined;
      this.relay.ctx.peer = undefined;
    } catch (e) {
      // Another process has the directory now (a second successor): this one drains to it.
      log.error("could not take the data directory back", { error: (e as Error).message });
    } finally {
      this.busy = false;
    }
  }

  private drain(): void {
    clearInterval(this.watch);
    const ctx = this.relay.ctx;
    const since = Date.now();
    const deadline = since + ctx.config["server.drainSeconds"] * 1000;
    ctx.draining = { since, deadline };
    this.relay.followEvery(FOLLOW_MS);
    let closedAt = 0;
    let loggedAt = since;
    const tick = () => {
      const now = Date.now();
      const left = ctx.conns.size;
      writeState(this.dir, DRAINING_FILE, { pid: process.pid, connections: left, since, deadline });
      if (left === 0) return this.finish("every connection has closed");
      if (now >= deadline && closedAt === 0) {
        closedAt = now;
        log.info("drain time over: closing the connections left", { connections: left });
        for (const c of ctx.conns) {
          c.send(noticeFrame("relay restarting: reconnect to the same address"));
          c.close(1000, "relay restarting");
        }
      }
      if (closedAt > 0 && now - closedAt >= CLOSE_GRACE_MS) return this.finish("drain time over");
      if (now - loggedAt >= LOG_EVERY_MS) {
        loggedAt = now;
        log.info("draining", {
          connections: left,
          secondsLeft: Math.max(0, Math.round((deadline - now) / 1000)),
        });
      }
    };
    // Counted once nothing more can arrive.
    void this.relay.stopAccepting().then(() => {
      log.info("draining: the successor listens, this relay serves its open connections until they close", {
        successor: this.successor,
        connections: ctx.conns.size,
        seconds: ctx.config["server.drainSeconds"],
      });
      this.ticking = setInterval(tick, TICK_MS);
      tick();
    });
  }

  private finish(why: string): void {
    clearInterval(this.ticking);
    removeState(this.dir, DRAINING_FILE);
    void this.exit(`drained: ${why}`);
  }

  /** Starts this program again from its file on disk, to take over from this process. */
  private upgrade(): void {
    // A second signal while the first's new process starts would start another one.
    if (this.started !== undefined && processAlive(this.started)) {
      log.info("upgrade: already under way", { pid: this.started });
      return;
    }
    const emulated = runByAnotherProgram();
    if (emulated) {
      log.error(
        `upgrade: cannot start this program again as it runs (${emulated}); start it with 'serve --takeover'`,
      );
      return;
    }
    const cmd = ownCommandLine();
    if (!cmd.includes("--takeover")) cmd.push("--takeover");
    // Its own session, so that a signal to this process's group does not reach it; its output
    // goes where this process's goes (a terminal, a file, the journal).
    const child = spawn(cmd[0]!, cmd.slice(1), { stdio: ["ignore", "inherit", "inherit"], detached: true });
    child.on("error", (e) => log.error("upgrade: could not start the new process", { error: e.message }));
    child.unref();
    this.started = child.pid;
    log.info("upgrade: started this program again from its file, to take over", {
      pid: child.pid,
      command: cmd.join(" "),
    });
  }

  /** Stops the timers (the relay stops for another reason). */
  close(): void {
    clearInterval(this.watch);
    clearInterval(this.ticking);
  }
}
