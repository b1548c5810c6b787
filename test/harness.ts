// Test harness: cleanup that registers itself, temp directories, a real relay on port 0 over
// one, and a raw WebSocket client that records every frame, for tests that check exact bytes.
import { afterAll, onTestFinished } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { finalizeEvent, generateSecretKey } from "nostr-tools/pure";
import { loadConfig } from "../src/config/load.ts";
import type { Relay } from "../src/relay.ts";
import { startRelay } from "../src/relay.ts";

let thisTest: (() => unknown)[] | undefined;

/**
 * Runs `fn` after the test that calls it (last registered first), or, called at a file's top
 * level or in a describe body, after that file's or describe's tests (an afterAll hook there, so
 * in the order registered). Not from beforeAll: bun ends its scope right after it. (Helper
 * modules are shared by every file of a run, so a hook of their own would fire after the first
 * file only.) Outside `bun test` it does nothing.
 */
export function cleanup(fn: () => unknown): void {
  const fns = thisTest ?? [];
  try {
    // A test's hooks run in order; each undoes the latest registration left, so last first.
    onTestFinished(async () => {
      thisTest = undefined;
      await fns.pop()?.();
    });
  } catch {
    try {
      afterAll(fn);
    } catch {
      // bench and scripts clean up themselves
    }
    return;
  }
  fns.push(fn);
  thisTest = fns;
}

const makeDir = (prefix: string): string => mkdtempSync(join(tmpdir(), prefix));
const removeDir = (dir: string): void => rmSync(dir, { recursive: true, force: true });

/** A new temporary directory, removed as `cleanup` says. */
export function tempDir(prefix = "relay-test-"): string {
  const dir = makeDir(prefix);
  cleanup(() => removeDir(dir));
  return dir;
}

/**
 * Disk every file under `dir` takes (data.mdb, derived/data.mdb, the lock files): their blocks,
 * not their lengths. The relay's derived/data.mdb is as long as its memory map, a sparse file
 * (store/store.ts writeMapSize); `du` counts the same.
 */
export function dirBytes(dir: string): number {
  let n = 0;
  for (const f of readdirSync(dir, { withFileTypes: true }))
    n += f.isDirectory() ? dirBytes(join(dir, f.name)) : statSync(join(dir, f.name)).blocks * 512;
  return n;
}

export interface TestRelay extends Relay {
  dir: string;
  /** stops the relay and removes its data directory if it made it */
  destroy(): Promise<void>;
}

/** A relay on port 0 over `dir` (a new one by default), destroyed as `cleanup` says. */
export function startTestRelay(flags: Record<string, string> = {}, dir?: string): TestRelay {
  const data = dir ?? makeDir("relay-test-");
  const relay = startRelay(loadConfig({ flags: { port: "0", data, ...flags } }));
  const destroy = async () => {
    await relay.stop();
    if (dir === undefined) removeDir(data);
  };
  cleanup(destroy);
  return Object.assign(relay, { dir: data, destroy });
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
