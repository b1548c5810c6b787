// A minimal Nostr client on Bun's WebSocket. Fixed-layout frames are read by slicing, not JSON.parse:
// a load generator that parses every EVENT measures itself as much as the relay it shares a CPU with.

export interface Handlers {
  ok?(id: string, accepted: boolean, message: string): void;
  /** `id` is the event id (read without parsing when the event JSON starts with "id") */
  event?(subId: string, id: string): void;
  eose?(subId: string): void;
  /** NIP-45 answer; `hll` is the 512-hex register string when the relay sent one */
  count?(subId: string, count: number, hll: string | undefined): void;
  closed?(subId: string, message: string): void;
  notice?(message: string): void;
}

export class Client {
  handlers: Handlers = {};
  closed = false;

  private constructor(readonly ws: WebSocket) {
    ws.addEventListener("message", (m) => this.dispatch(m.data as string));
    ws.addEventListener("close", () => {
      this.closed = true;
    });
  }

  /**
   * Opens a connection; one refused is tried again twice, 200 ms apart, as a client would (a
   * relay busy with 200 handshakes at once has refused one now and then, and a whole run's
   * figures were lost to it).
   */
  static async connect(url: string, timeoutMs = 10_000): Promise<Client> {
    for (let tries = 1; ; tries++) {
      try {
        return await Client.connectOnce(url, timeoutMs);
      } catch (e) {
        if (tries === 3 || (e as Error).message.includes("timed out")) throw e;
        await Bun.sleep(200);
      }
    }
  }

  private static connectOnce(url: string, timeoutMs: number): Promise<Client> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const timer = setTimeout(() => {
        ws.close();
        reject(new Error(`connect to ${url} timed out`));
      }, timeoutMs);
      ws.addEventListener("open", () => {
        clearTimeout(timer);
        resolve(new Client(ws));
      });
      ws.addEventListener("error", () => {
        clearTimeout(timer);
        reject(new Error(`cannot connect to ${url}`));
      });
    });
  }

  send(frame: string): void {
    if (!this.closed) this.ws.send(frame);
  }

  req(subId: string, filters: readonly object[]): void {
    this.send(JSON.stringify(["REQ", subId, ...filters]));
  }

  close(): void {
    this.closed = true;
    this.ws.close();
  }

  private dispatch(frame: string): void {
    const h = this.handlers;
    // ["EVENT","sub",{"id":"<64 hex>"... — this tool's sub ids never contain quotes.
    if (frame.startsWith('["EVENT","')) {
      const subEnd = frame.indexOf('",', 10);
      const subId = frame.slice(10, subEnd);
      const at = subEnd + 2;
      const id =
        frame.startsWith('{"id":"', at) && frame.charCodeAt(at + 71) === 34
          ? frame.slice(at + 7, at + 71)
          : ((JSON.parse(frame) as [string, string, { id: string }])[2].id ?? "");
      h.event?.(subId, id);
      return;
    }
    // ["OK","<64 hex>",true,"..."]
    if (frame.startsWith('["OK","') && frame.charCodeAt(71) === 34) {
      const accepted = frame.startsWith(",true", 72);
      // `,""]` after the flag is an empty message, which needs no parsing.
      const empty = frame.length === (accepted ? 81 : 82);
      h.ok?.(frame.slice(7, 71), accepted, empty ? "" : String((JSON.parse(frame) as unknown[])[3] ?? ""));
      return;
    }
    let m: unknown[];
    try {
      m = JSON.parse(frame) as unknown[];
    } catch {
      return;
    }
    switch (m[0]) {
      case "EOSE":
        h.eose?.(m[1] as string);
        return;
      case "COUNT": {
        const a = (m[2] ?? {}) as { count?: unknown; hll?: unknown };
        h.count?.(m[1] as string, Number(a.count), typeof a.hll === "string" ? a.hll : undefined);
        return;
      }
      case "CLOSED":
        h.closed?.(m[1] as string, String(m[2] ?? ""));
        return;
      case "NOTICE":
        h.notice?.(String(m[1] ?? ""));
        return;
      case "OK":
        h.ok?.(String(m[1]), m[2] === true, String(m[3] ?? ""));
        return;
      case "EVENT":
        h.event?.(String(m[1]), String((m[2] as { id?: unknown }).id));
        return;
    }
  }
}

/** Opens `n` connections, a few at a time so a small relay's accept queue is not flooded. */
export async function connectMany(url: string, n: number): Promise<Client[]> {
  const out: Client[] = [];
  for (let i = 0; i < n; i += 32) {
    const batch = Array.from({ length: Math.min(32, n - i) }, () => Client.connect(url));
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

export const closeAll = (cs: readonly Client[]): void => {
  for (const c of cs) c.close();
};

/** A promise and its resolver, for "the last answer arrived" moments. */
export function signal(): { promise: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const promise = new Promise<void>((r) => {
    fire = r;
  });
  return { promise, fire };
}

/** True if `p` settles within `ms`; the timer is cleared so it never holds the process open. */
export async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((r) => {
    timer = setTimeout(() => r(false), ms);
  });
  const ok = await Promise.race([p.then(() => true), late]);
  clearTimeout(timer);
  return ok;
}
