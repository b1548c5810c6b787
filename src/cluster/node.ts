// This relay as one node of several sharing a NATS JetStream stream. A producer: what the writer
// committed from clients is appended to the stream (outbox.ts), with the event id as
// Nats-Msg-Id so two nodes appending the same event store it once. A consumer: a durable
// consumer per node feeds the stream's events to the local writer, whose rules (duplicates,
// replacement, deletion, vanish, expiry) then decide them as on every other node, and live
// fanout follows from the commit. Ephemeral events cross on a plain subject and are never stored.
// Losing NATS never stops the node: it keeps serving and storing, and catches up on reconnect.
import { hostname } from "node:os";
import type {
  AckPolicy,
  Consumer,
  DeliverPolicy,
  JetStreamClient,
  JetStreamManager,
} from "@nats-io/jetstream";
import type { MsgHdrs, NatsConnection, Subscription as NatsSub } from "@nats-io/transport-node";
import type { Config } from "../config/schema.ts";
import { log } from "../log.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Committed } from "../store/batch.ts";
import type { Store } from "../store/types.ts";
import type { Writer } from "../store/writer.ts";
import { Outbox } from "./outbox.ts";

/** Events held in memory for appending; beyond this they are read back from the log. */
const OUTBOX_MAX = 50_000;
/** Appends in flight at once. */
const IN_FLIGHT = 256;
/** With okAfter = "stream", how long an OK waits for the stream before it says so. */
export const STREAM_ACK_TIMEOUT_MS = 10_000;
const RETRY_MS = 1000;
const ORIGIN_HEADER = "Nostr-Node";

// The NATS client is loaded only by a node that joins a cluster: a single relay (and every CLI
// command) starts without it.
const loadNats = async () => {
  const [transport, js] = await Promise.all([
    import("@nats-io/transport-node"),
    import("@nats-io/jetstream"),
  ]);
  return { ...transport, ...js };
};

/** NATS addresses for logs: user and password (nats://user:pass@host) left out. */
export const redactNatsUrl = (url: string): string => url.replace(/\/\/[^@/\s]*@/g, "//…@");

export interface ClusterStatus {
  nodeId: string;
  stream: string;
  connected: boolean;
  /** the stream's last sequence when last looked at */
  streamSeq: number;
  /** stream messages this node's consumer has not delivered or not acknowledged */
  consumerLag: number;
  /** stream sequence up to which this node has applied everything */
  ackFloor: number;
  /** committed client events not yet acknowledged by the stream */
  outbox: number;
  published: number;
  applied: number;
  lastError: string;
}

export class ClusterNode {
  readonly nodeId: string;
  readonly okAfterStream: boolean;
  private readonly stream: string;
  private readonly subject: string;
  private readonly ephemeralSubject: string;
  private readonly outbox: Outbox;
  private nc: NatsConnection | undefined;
  private headers: (() => MsgHdrs) | undefined;
  private ack: { policy: AckPolicy; deliver: DeliverPolicy } | undefined;
  private js: JetStreamClient | undefined;
  private jsm: JetStreamManager | undefined;
  private consumer: Consumer | undefined;
  private ephemeralSub: NatsSub | undefined;
  private stopped = false;
  private inFlight = 0;
  private pumping = false;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly timers: ReturnType<typeof setInterval>[] = [];
  /** ids being applied from the stream: their commit is not appended again */
  private readonly fromStream = new Map<string, number>();
  private stopConsuming: (() => void) | undefined;
  private readonly st: ClusterStatus;

  constructor(
    private readonly config: Config,
    store: Store,
    private readonly writer: Writer,
    /** hands an ephemeral event from another node to live subscribers */
    private readonly deliverEphemeral: (e: NostrEvent, json: string) => void,
    port: number,
  ) {
    this.stream = config["cluster.stream"];
    this.okAfterStream = config["cluster.okAfter"] === "stream";
    // The durable consumer is named after the node: a restarted node resumes where it stopped.
    this.nodeId = (config["cluster.nodeId"] || `${hostname()}-${port}`).replace(/[^A-Za-z0-9_-]/g, "_");
    this.subject = `${this.stream}.event`;
    this.ephemeralSubject = `${this.stream}.ephemeral`;
    this.outbox = new Outbox(store, config.data, () => writer.visibleSerial, OUTBOX_MAX);
    this.st = {
      nodeId: this.nodeId,
      stream: this.stream,
      connected: false,
      streamSeq: 0,
      consumerLag: 0,
      ackFloor: 0,
      outbox: 0,
      published: 0,
      applied: 0,
      lastError: "",
    };
  }

  /** What /metrics shows. */
  get status(): ClusterStatus {
    return { ...this.st, outbox: this.outbox.size };
  }

  /** Connects in the background; the relay serves meanwhile. */
  start(): void {
    void this.run();
    this.timers.push(
      setInterval(() => this.outbox.save(), 1000),
      setInterval(() => void this.poll(), 2000),
    );
  }

  /** The writer committed these; the ones clients sent go to the stream. */
  committed(stored: readonly Committed[]): void {
    this.outbox.committed(stored, (id) => this.fromStream.has(id));
    this.pump();
  }

  /** An ephemeral event a client sent here: the other nodes' subscribers get it too. */
  ephemeral(json: string): void {
    if (!this.nc || this.nc.isClosed() || !this.headers) return;
    const h = this.headers();
    h.set(ORIGIN_HEADER, this.nodeId);
    try {
      this.nc.publish(this.ephemeralSubject, json, { headers: h });
    } catch (e) {
      this.fail("ephemeral publish", e);
    }
  }

  /**
   * With okAfter = "stream": resolves true once the stream holds the event (stored at `serial`,
   * or a duplicate when undefined), false if it did not within STREAM_ACK_TIMEOUT_MS.
   */
  inStream(id: string, serial: number | undefined): Promise<boolean> {
    return this.outbox.whenAcked(id, serial, STREAM_ACK_TIMEOUT_MS);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    clearTimeout(this.retryTimer);
    this.stopConsuming?.();
    this.ephemeralSub?.unsubscribe();
    // Appends in flight get a moment; what is left is above the watermark and read back later.
    const deadline = Date.now() + 2000;
    while (this.inFlight > 0 && Date.now() < deadline) await Bun.sleep(20);
    this.outbox.save();
    await this.nc?.close().catch(() => {});
  }

  private async run(): Promise<void> {
    try {
      await this.connectAndConsume();
    } catch (e) {
      // Never an unhandled rejection: the node keeps serving alone.
      log.error("cluster stopped working; serving as a single node", { error: e });
      this.fail("cluster", e);
    }
  }

  private async connectAndConsume(): Promise<void> {
    const servers = this.config["cluster.natsUrl"]
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const { AckPolicy, DeliverPolicy, connect, headers, jetstream, jetstreamManager } = await loadNats();
    this.ack = { policy: AckPolicy.Explicit, deliver: DeliverPolicy.All };
    this.headers = headers;
    try {
      this.nc = await connect({
        servers,
        name: `relay ${this.nodeId}`,
        waitOnFirstConnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
      });
    } catch (e) {
      log.error("cannot connect to NATS; serving as a single node", {
        natsUrl: redactNatsUrl(servers.join(",")),
        error: e,
      });
      this.fail("connect", e);
      return;
    }
    if (this.stopped) return void this.nc.close();
    this.connected(true);
    void this.watch(this.nc);
    this.js = jetstream(this.nc);
    // No request here (checkAPI off): nothing to fail while NATS is away.
    this.jsm = await jetstreamManager(this.nc, { checkAPI: false });
    this.ephemeralSub = this.nc.subscribe(this.ephemeralSubject, {
      callback: (err, m) => {
        if (err || m.headers?.get(ORIGIN_HEADER) === this.nodeId) return;
        const json = m.string();
        try {
          this.deliverEphemeral(JSON.parse(json) as NostrEvent, json);
        } catch (e) {
          this.fail("ephemeral event", e);
        }
      },
    });
    // The stream and the consumer are set up again after any failure (NATS restarted without
    // its store, the consumer deleted by an operator).
    while (!this.stopped) {
      try {
        await this.ensureStream();
        await this.consume();
      } catch (e) {
        this.fail("stream", e);
      }
      if (!this.stopped) await Bun.sleep(RETRY_MS);
    }
  }

  private async watch(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === "disconnect") this.connected(false);
      else if (s.type === "reconnect") this.connected(true);
      else if (s.type === "error") this.fail("nats", s.error);
    }
  }

  private connected(up: boolean): void {
    if (this.st.connected === up) return;
    this.st.connected = up;
    if (up) {
      log.info("cluster connected", { node: this.nodeId, stream: this.stream });
      this.pump();
    } else log.warn("cluster disconnected; serving and storing locally", { node: this.nodeId });
  }

  private async ensureStream(): Promise<void> {
    const jsm = this.jsm!;
    let firstSeq: number;
    try {
      firstSeq = (await jsm.streams.info(this.stream)).state.first_seq;
    } catch {
      const hours = this.config["cluster.maxAgeHours"];
      const info = await jsm.streams.add({
        name: this.stream,
        subjects: [this.subject],
        duplicate_window: this.config["cluster.duplicateWindowSeconds"] * 1e9,
        max_age: hours * 3600 * 1e9,
      });
      firstSeq = info.state.first_seq;
      log.info("cluster stream created", { stream: this.stream, maxAgeHours: hours });
    }
    try {
      const floor = (await jsm.consumers.info(this.stream, this.nodeId)).ack_floor.stream_seq;
      // The stream dropped events this node never applied (down longer than the retention):
      // they can only come from a peer (docs/cluster.md).
      if (floor > 0 && floor + 1 < firstSeq)
        this.fail(
          "missed",
          new Error(
            `stream sequences ${floor + 1}-${firstSeq - 1} expired before this node applied them; run relay sync against a peer`,
          ),
        );
    } catch {
      await jsm.consumers.add(this.stream, {
        durable_name: this.nodeId,
        ack_policy: this.ack!.policy,
        deliver_policy: this.ack!.deliver,
        // A node killed mid-batch gets its unacknowledged messages again this soon after a
        // restart; a message redelivered while the first copy is still being applied is only a
        // duplicate.
        ack_wait: 10e9,
        max_ack_pending: 10_000,
      });
    }
    this.consumer = await this.js!.consumers.get(this.stream, this.nodeId);
  }

  /** Feeds the stream's events to the writer, acknowledging each once it is on disk here. */
  private async consume(): Promise<void> {
    const msgs = await this.consumer!.consume({ max_messages: 1000 });
    this.stopConsuming = () => void msgs.stop();
    void (async () => {
      for await (const s of msgs.status()) {
        if (s.type === "next" || s.type === "heartbeat") continue;
        log.debug("cluster consumer", { status: s.type });
        // NATS came back without its store, or an operator removed the consumer: stop, and the
        // loop in `run` sets the stream and the consumer up again.
        if (
          s.type === "consumer_not_found" ||
          s.type === "stream_not_found" ||
          s.type === "consumer_deleted"
        ) {
          this.fail("consumer", new Error(s.type));
          void msgs.stop();
        }
      }
    })();
    for await (const m of msgs) {
      let e: NostrEvent;
      const json = m.string();
      try {
        e = JSON.parse(json) as NostrEvent;
        if (typeof e.id !== "string" || e.id.length !== 64) throw new Error("no event id");
      } catch (err) {
        // Not an event: nothing any node can do with it; acknowledged so it does not block.
        this.fail(`stream message ${m.seq}`, err);
        this.settle(() => m.term());
        continue;
      }
      this.fromStream.set(e.id, (this.fromStream.get(e.id) ?? 0) + 1);
      // Not awaited: the writer takes everything that arrives in a turn as one batch.
      this.writer.submit(e, json).then(
        () => {
          const n = this.fromStream.get(e.id)! - 1;
          if (n === 0) this.fromStream.delete(e.id);
          else this.fromStream.set(e.id, n);
          this.st.applied++;
          this.settle(() => m.ack());
        },
        (err) => {
          this.fromStream.delete(e.id);
          this.fail("apply", err);
          this.settle(() => m.nak(RETRY_MS));
        },
      );
    }
  }

  /** An ack or nak on a connection that may be closing: unsent, the message comes again. */
  private settle(f: () => void): void {
    try {
      f();
    } catch (e) {
      this.fail("ack", e);
    }
  }

  /** Hands queued events to the stream, IN_FLIGHT at a time. */
  private pump(): void {
    if (this.pumping || this.stopped || !this.js || !this.st.connected || this.retryTimer) return;
    this.pumping = true;
    try {
      for (const o of this.outbox.next(IN_FLIGHT - this.inFlight)) {
        this.inFlight++;
        const h = this.headers!();
        h.set(ORIGIN_HEADER, this.nodeId);
        this.js
          .publish(this.subject, o.json, { msgID: o.id, headers: h, timeout: 5000 })
          .then(
            () => {
              this.st.published++;
              this.outbox.acked(o);
            },
            (e) => {
              this.outbox.failed(o);
              this.fail("publish", e);
              this.retryLater();
            },
          )
          .finally(() => {
            this.inFlight--;
            this.pump();
          });
      }
    } finally {
      this.pumping = false;
    }
  }

  /** After a failed append nothing is sent for RETRY_MS (a stream that is gone fails at once). */
  private retryLater(): void {
    if (this.retryTimer || this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.pump();
    }, RETRY_MS);
  }

  /** Stream sequence and consumer lag for /metrics; also restarts a stalled pump. */
  private async poll(): Promise<void> {
    this.pump();
    if (!this.consumer || !this.st.connected) return;
    try {
      const info = await this.consumer.info();
      this.st.consumerLag = info.num_pending + info.num_ack_pending;
      this.st.ackFloor = info.ack_floor.stream_seq;
      const s = await this.jsm!.streams.info(this.stream);
      this.st.streamSeq = s.state.last_seq;
    } catch (e) {
      this.fail("status", e);
    }
  }

  private fail(what: string, e: unknown): void {
    const msg = `${what}: ${(e as Error)?.message ?? String(e)}`;
    if (msg !== this.st.lastError) log.warn("cluster", { node: this.nodeId, error: msg });
    this.st.lastError = msg;
  }
}
