// Test harness: a real relay on port 0 over a temp LMDB directory, and a raw WebSocket client
// that records every frame, for tests that check exact bytes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { finalizeEvent, generateSecretKey } from "nostr-tools/pure";
import { loadConfig } from "../src/config/load.ts";
import type { Relay } from "../src/relay.ts";
import { startRelay } from "../src/relay.ts";

export interface TestRelay extends Relay {
  dir: string;
  /** stops the relay and removes its data */
  destroy(): Promise<void>;
}

export function tempDir(name = "relay-test-"): string {
  return mkdtempSync(join(tmpdir(), name));
}

export function startTestRelay(flags: Record<string, string> = {}, dir = tempDir()): TestRelay {
  const relay = startRelay(loadConfig({ flags: { port: "0", data: dir, ...flags } }));
  return Object.assign(relay, {
    dir,
    async destroy() {
      await relay.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

export const now = (): number => Math.floor(Date.now() / 1000);

export interface Template {
  kind?: number;
  created_at?: number;
  tags?: string[][];
  content?: string;
}

export function signed(sk: Uint8Array, t: Template = {}) {
  return finalizeEvent(
    { kind: t.kind ?? 1, created_at: t.created_at ?? now(), tags: t.tags ?? [], content: t.content ?? "" },
    sk,
  );
}

export const newKey = (): Uint8Array => generateSecretKey();

/** A raw client: sends strings, records parsed frames, waits for the ones a test expects. */
export class RawClient {
  readonly frames: unknown[][] = [];
  readonly raw: string[] = [];
  private waiters: { pred: (f: unknown[]) => boolean; resolve: (f: unknown[]) => void }[] = [];
  closed: { code: number; reason: string } | undefined;

  private constructor(readonly ws: WebSocket) {
    ws.onmessage = (m) => {
      const text = String(m.data);
      this.raw.push(text);
      const f = JSON.parse(text) as unknown[];
      this.frames.push(f);
      this.waiters = this.waiters.filter((w) => {
        if (!w.pred(f)) return true;
        w.resolve(f);
        return false;
      });
    };
    ws.onclose = (e) => {
      this.closed = { code: e.code, reason: e.reason };
    };
  }

  /** `headers` go with the upgrade request (a reverse proxy's X-Forwarded-For, say). */
  static async connect(url: string, headers?: Record<string, string>): Promise<RawClient> {
    const ws = new WebSocket(url, { headers });
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onerror = () => reject(new Error(`cannot connect to ${url}`));
    });
    return new RawClient(ws);
  }

  send(msg: unknown): void {
    this.ws.send(typeof msg === "string" ? msg : JSON.stringify(msg));
  }

  /** Resolves with the first frame (already received or future) matching pred. */
  next(pred: (f: unknown[]) => boolean, timeoutMs = 5000, from = 0): Promise<unknown[]> {
    const have = this.frames.slice(from).find(pred);
    if (have) return Promise.resolve(have);
    return new Promise((resolve, reject) => {
      const t = setTimeout(
        () => reject(new Error(`timed out; frames so far: ${JSON.stringify(this.frames)}`)),
        timeoutMs,
      );
      this.waiters.push({
        pred,
        resolve: (f) => {
          clearTimeout(t);
          resolve(f);
        },
      });
    });
  }

  /** The first OK for this id at or after frame index `from`. */
  ok(id: string, from = 0): Promise<unknown[]> {
    return this.next((f) => f[0] === "OK" && f[1] === id, 5000, from);
  }

  /** Sends an EVENT and resolves with the OK that answers this send. */
  async publish(event: object & { id: string }): Promise<unknown[]> {
    const from = this.frames.length;
    this.send(["EVENT", event]);
    return this.ok(event.id, from);
  }

  /** Sends a REQ and resolves with the ids of stored events received before EOSE. */
  async req(subId: string, ...filters: unknown[]): Promise<string[]> {
    const start = this.frames.length;
    this.send(["REQ", subId, ...filters]);
    await this.next((f) => (f[0] === "EOSE" || f[0] === "CLOSED") && f[1] === subId, 5000, start);
    const end = this.frames.findIndex(
      (f, i) => i >= start && (f[0] === "EOSE" || f[0] === "CLOSED") && f[1] === subId,
    );
    return this.frames
      .slice(start, end)
      .filter((f) => f[0] === "EVENT" && f[1] === subId)
      .map((f) => (f[2] as { id: string }).id);
  }

  close(): void {
    this.ws.close();
  }
}
