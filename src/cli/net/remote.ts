// A conversation with a relay for the commands that keep one open (`relay sync`, `relay stream`):
// frames handed to whoever waits for them, NIP-42 AUTH answered when the relay asks and a key
// was given, and a failure (closed socket, no answer in time) as one error with the reason.
import { finalizeEvent, getPublicKey } from "nostr-tools/pure";
import { RelaySocket } from "./ws-client.ts";

/** The relay closed the connection or did not answer in time. */
export class RemoteError extends Error {}

type Waiter = {
  pred: (f: unknown[]) => boolean;
  resolve: (f: unknown[]) => void;
  reject: (e: Error) => void;
};

export class Remote {
  private waiters: Waiter[] = [];
  private listeners: ((f: unknown[]) => void)[] = [];
  private challenge: string | undefined;
  private authed = false;
  /** set once the connection is gone, with why */
  closedReason: string | undefined;

  private constructor(
    readonly url: URL,
    private readonly sock: RelaySocket,
    private readonly secret: Uint8Array | undefined,
    private readonly timeoutMs: number,
  ) {
    void this.pump();
  }

  /** Opens the connection; rejects with a ConnectError that explains a failure. */
  static async open(url: URL, timeoutMs: number, secret?: Uint8Array): Promise<Remote> {
    return new Remote(url, await RelaySocket.open(url, timeoutMs), secret, timeoutMs);
  }

  private async pump(): Promise<void> {
    for (;;) {
      const got = await this.sock.next(Infinity);
      if (got.type === "closed") {
        this.closedReason = got.reason;
        for (const w of this.waiters.splice(0)) w.reject(new RemoteError(got.reason));
        return;
      }
      if (got.type !== "frame") continue;
      const f = got.frame;
      if (f[0] === "AUTH" && typeof f[1] === "string") this.challenge = f[1];
      for (const l of this.listeners) l(f);
      this.waiters = this.waiters.filter((w) => {
        if (!w.pred(f)) return true;
        w.resolve(f);
        return false;
      });
    }
  }

  send(frame: unknown[]): void {
    this.sock.send(frame);
  }

  /** Every frame from now on (live events, OKs), besides the waiters; returns the undo. */
  onFrame(l: (f: unknown[]) => void): () => void {
    this.listeners.push(l);
    return () => {
      this.listeners = this.listeners.filter((x) => x !== l);
    };
  }

  /** The next frame matching pred; rejects when the connection closes or nothing comes in time. */
  next(pred: (f: unknown[]) => boolean, timeoutMs = this.timeoutMs): Promise<unknown[]> {
    if (this.closedReason !== undefined) return Promise.reject(new RemoteError(this.closedReason));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new RemoteError(`no answer from ${this.url.href} within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      const waiter: Waiter = {
        pred,
        resolve: (f) => {
          clearTimeout(timer);
          resolve(f);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.waiters.push(waiter);
    });
  }

  /**
   * Answers the relay's NIP-42 challenge with the key given, once; false without a key. Called
   * when an answer says `auth-required:`; the challenge came on connect or comes now.
   */
  async authenticate(): Promise<boolean> {
    if (!this.secret) return false;
    if (this.authed) return true;
    const challenge = this.challenge ?? ((await this.next((f) => f[0] === "AUTH")) as [string, string])[1];
    const e = finalizeEvent(
      {
        kind: 22242,
        created_at: Math.floor(Date.now() / 1000),
        tags: [
          ["relay", this.url.href.replace(/\/$/, "")],
          ["challenge", challenge],
        ],
        content: "",
      },
      this.secret,
    );
    this.send(["AUTH", e]);
    const ok = await this.next((f) => f[0] === "OK" && f[1] === e.id);
    if (ok[2] !== true)
      throw new RemoteError(`AUTH as ${getPublicKey(this.secret)} refused: ${String(ok[3] ?? "")}`);
    this.authed = true;
    return true;
  }

  close(): void {
    this.sock.close();
  }
}

/** Whether a refusal asks for NIP-42 AUTH. */
export const wantsAuth = (reason: unknown): boolean => String(reason).startsWith("auth-required:");
