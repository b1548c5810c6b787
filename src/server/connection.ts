// Per-connection state and the only place frames are written to a socket. Sending honours
// backpressure: bulk answers wait for `drain`; a socket that cannot keep up with live traffic
// is closed by Bun once its queue passes limits.maxOutboundBytes.
import { randomBytes } from "node:crypto";
import type { ServerWebSocket } from "bun";
import type { Subscription } from "../fanout/subscription.ts";
import type { Client, NegSession } from "../ingest/client.ts";
import { authFrame } from "../wire/frames.ts";
import { Meter } from "./ratelimit.ts";

export interface ConnData {
  conn?: Conn;
  ip: string;
}

/** Bulk answers pause once this much is queued and resume on drain. */
const BULK_HIGH_WATER = 1 << 20;

let nextId = 1;

/** A NIP-42 challenge: 16 random bytes, hex. */
const newChallenge = (): string => randomBytes(16).toString("hex");

export class Conn implements Client {
  readonly id = nextId++;
  readonly subs = new Map<string, Subscription>();
  /** open NIP-77 negentropy sessions */
  readonly negs = new Map<string, NegSession>();
  /** NIP-42 challenge, sent once when first needed (askAuth), and the pubkeys that answered it */
  readonly challenge = newChallenge();
  challengeSent = false;
  /** the challenge a silent client gets after connecting (auth.writes / auth.reads) */
  challengeTimer: Timer | undefined;
  readonly authed = new Set<string>();
  readonly meter = new Meter();
  /** rate-limited frames in a row */
  refusals = 0;
  closed = false;
  private drainWaiters: (() => void)[] = [];

  constructor(
    readonly ws: ServerWebSocket<ConnData>,
    readonly ip: string,
    /** frames sent, by verb (shared by every connection, for /metrics) */
    private readonly framesOut: Record<string, number> = {},
  ) {}

  /**
   * Counts a frame for /metrics. Callers that know the verb say it: an EVENT frame is built by
   * concatenation, and reading its verb made JavaScriptCore flatten it first (5% of the main
   * thread's time under the query mix); every other frame starts with ["VERB", the verb between
   * the 2nd and 3rd quote.
   */
  private count(frame: string, verb = frame.slice(2, frame.indexOf('"', 2))): void {
    this.counted(verb, 1);
  }

  private counted(verb: string, n: number): void {
    this.framesOut[verb] = (this.framesOut[verb] ?? 0) + n;
  }

  /** Frames waiting for the end of this turn, sent together under one cork. */
  private outbox: string[] | null = null;

  /**
   * Queues one text frame; false when the socket is gone. Frames queued in one turn of the event
   * loop (the OKs of a committed batch, a burst of live events) go out corked, one write for
   * all of them instead of a syscall each. A dropped frame means the reader fell too far
   * behind: the connection is closed rather than left with a gap.
   */
  send(frame: string, verb?: string): boolean {
    if (this.closed) return false;
    this.count(frame, verb);
    if (this.outbox) this.outbox.push(frame);
    else {
      this.outbox = [frame];
      queueMicrotask(this.flush);
    }
    return true;
  }

  /** Writes the queued frames now (before bulk answers and closes, so order is kept). */
  readonly flush = (): void => {
    const frames = this.outbox;
    if (!frames) return;
    this.outbox = null;
    if (this.closed) return;
    if (frames.length === 1) this.write(frames[0]!);
    else
      this.ws.cork(() => {
        for (const f of frames) if (!this.write(f)) return;
      });
  };

  private write(frame: string): boolean {
    if (this.ws.send(frame) !== 0) return true;
    this.closed = true;
    this.ws.close(1008, "outbound queue full: reader too slow");
    return false;
  }

  /** Sends the NIP-42 challenge unless it was sent already: one challenge per connection. */
  askAuth(): void {
    clearTimeout(this.challengeTimer);
    if (this.challengeSent) return;
    this.challengeSent = true;
    this.send(authFrame(this.challenge));
  }

  pause(): void {
    if (!this.closed) this.ws.pause();
  }

  resume(): void {
    if (!this.closed) this.ws.resume();
  }

  /** Closes after the queued frames are written. */
  close(code: number, reason: string): void {
    this.flush();
    this.ws.close(code, reason);
  }

  /** Sends EVENT frames in order, then `last`, waiting for the socket to drain when its queue is long. */
  async sendAll(events: readonly string[], isCancelled: () => boolean, last?: string): Promise<boolean> {
    this.flush();
    let i = 0;
    // The last frame goes in the same corked write as the events before it.
    let lastSent = last === undefined;
    while (i < events.length || !lastSent) {
      if (this.closed || isCancelled()) return false;
      const from = i;
      this.ws.cork(() => {
        while (i < events.length && this.ws.getBufferedAmount() < BULK_HIGH_WATER) this.ws.send(events[i++]!);
        if (i === events.length && !lastSent) {
          this.count(last!);
          this.ws.send(last!);
          lastSent = true;
        }
      });
      this.counted("EVENT", i - from);
      if (i < events.length || !lastSent) await new Promise<void>((r) => this.drainWaiters.push(r));
    }
    return !this.closed;
  }

  onDrain(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }

  onClose(): void {
    this.closed = true;
    clearTimeout(this.challengeTimer);
    this.onDrain();
  }
}

declare module "../context.ts" {
  interface RelayContext {
    /** open WebSocket connections */
    conns: Set<Conn>;
  }
}
