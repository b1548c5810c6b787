// The explorer's one WebSocket to its own relay: subscriptions (sent again after a reconnect),
// publishing with the relay's OK, and NIP-42 AUTH when the relay asks for it on a write.

import type { NostrEvent } from "../../../nostr/event.ts";

export type { NostrEvent };

export type Filter = Record<string, unknown>;

export interface SubHandlers {
  event(e: NostrEvent): void;
  eose?(): void;
  closed?(reason: string): void;
}

/** [accepted, message] as the relay answered, or false with why no answer came. */
export type OkAnswer = [boolean, string];

export type Status = "connecting" | "open" | "closed";

const OK_TIMEOUT_MS = 10_000;

export class RelaySocket {
  private ws: WebSocket | undefined;
  private subs = new Map<string, { filters: Filter[]; h: SubHandlers }>();
  private waiting = new Map<string, (a: OkAnswer) => void>();
  private outbox: string[] = [];
  private seq = 0;
  private backoff = 500;
  /** the last NIP-42 challenge the relay sent */
  challenge: string | undefined;
  onStatus: (s: Status) => void = () => {};

  constructor(readonly url: string) {
    this.connect();
  }

  private connect(): void {
    this.onStatus("connecting");
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.onopen = () => {
      this.backoff = 500;
      this.onStatus("open");
      for (const [id, s] of this.subs) ws.send(JSON.stringify(["REQ", id, ...s.filters]));
      for (const f of this.outbox.splice(0)) ws.send(f);
    };
    ws.onmessage = (m) => this.receive(String(m.data));
    ws.onclose = () => {
      this.onStatus("closed");
      this.challenge = undefined;
      for (const [id, done] of this.waiting) {
        this.waiting.delete(id);
        done([false, "connection closed before the relay answered"]);
      }
      setTimeout(() => this.connect(), this.backoff);
      this.backoff = Math.min(this.backoff * 2, 30_000);
    };
  }

  private get open(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  private receive(text: string): void {
    let f: unknown;
    try {
      f = JSON.parse(text);
    } catch {
      return;
    }
    if (!Array.isArray(f)) return;
    const [verb, a, b, c] = f as [unknown, unknown, unknown, unknown];
    const sub = typeof a === "string" ? this.subs.get(a) : undefined;
    switch (verb) {
      case "EVENT":
        if (sub && isEvent(b)) sub.h.event(b);
        return;
      case "EOSE":
        sub?.h.eose?.();
        return;
      case "CLOSED":
        if (sub) {
          this.subs.delete(a as string);
          sub.h.closed?.(String(b ?? ""));
        }
        return;
      case "OK": {
        const done = typeof a === "string" ? this.waiting.get(a) : undefined;
        if (done) {
          this.waiting.delete(a as string);
          done([b === true, String(c ?? "")]);
        }
        return;
      }
      case "AUTH":
        if (typeof a === "string") this.challenge = a;
        return;
      default:
        return;
    }
  }

  /** Opens a subscription; the returned function closes it. */
  subscribe(filters: Filter[], h: SubHandlers): () => void {
    const id = `x${++this.seq}`;
    this.subs.set(id, { filters, h });
    // When closed, onopen sends every open subscription.
    if (this.open) this.ws!.send(JSON.stringify(["REQ", id, ...filters]));
    return () => {
      if (this.subs.delete(id) && this.open) this.ws!.send(JSON.stringify(["CLOSE", id]));
    };
  }

  /** Sends an EVENT (or, with verb AUTH, an auth event) and waits for the relay's OK. */
  send(event: NostrEvent, verb: "EVENT" | "AUTH" = "EVENT"): Promise<OkAnswer> {
    const frame = JSON.stringify([verb, event]);
    if (this.open) this.ws!.send(frame);
    else this.outbox.push(frame);
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.waiting.delete(event.id);
        resolve([false, "no answer from the relay"]);
      }, OK_TIMEOUT_MS);
      this.waiting.set(event.id, (a) => {
        clearTimeout(t);
        resolve(a);
      });
    });
  }
}

export function isEvent(x: unknown): x is NostrEvent {
  const e = x as NostrEvent;
  return (
    typeof e === "object" &&
    e !== null &&
    typeof e.id === "string" &&
    typeof e.pubkey === "string" &&
    typeof e.created_at === "number" &&
    typeof e.kind === "number" &&
    typeof e.content === "string" &&
    Array.isArray(e.tags)
  );
}
