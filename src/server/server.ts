// Bun.serve with one fetch handler (HTTP routes and WebSocket upgrade) and one websocket
// handler set. Owns sockets and routes parsed frames to the ingest handlers; no storage here.
import type { Server } from "bun";
import type { RelayContext } from "../context.ts";
import { bump } from "../context.ts";
import { challengeOnConnect, challengeOnFrame, handleAuth } from "../ingest/auth.ts";
import { EventIngest } from "../ingest/event.ts";
import type { ClientMessage } from "../ingest/messages.ts";
import { readFrame } from "../ingest/messages.ts";
import { closeAllNegs, closeNeg, handleNegMsg, handleNegOpen } from "../ingest/negentropy.ts";
import { closeSubscription, handleCount, handleReq } from "../ingest/req.ts";
import { log } from "../log.ts";
import { closedFrame, negErrFrame, noticeFrame, okReject } from "../wire/frames.ts";
import { closed, rateLimited, reasonText } from "../wire/reasons.ts";
import { clientIp } from "./client-ip.ts";
import type { ConnData } from "./connection.ts";
import { Conn } from "./connection.ts";
import { handleHttp } from "./http.ts";

/**
 * Fails as a taken port does when something listens on host:port already. The relay binds with
 * SO_REUSEPORT so that a successor can bind beside it (handover/), and the kernel would let two
 * relays of one user share a port silently: a plain bind tells first.
 */
function checkPortFree(host: string, port: number): void {
  if (port === 0) return;
  try {
    Bun.listen({ hostname: host, port, socket: { data() {} } }).stop(true);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EADDRINUSE") throw e;
    throw new Error(`Failed to start server. Is port ${port} in use?`);
  }
}

/** `sharePort`: a predecessor listens on the port and is handing over to this process. */
export function startServer(ctx: RelayContext, sharePort = false): Server<ConnData> {
  const c = ctx.config;
  if (!sharePort) checkPortFree(c.host, c.port);
  const conns = ctx.conns;
  const maxBytes = c["limits.maxMessageBytes"];
  const ingest = new EventIngest(ctx);
  const gate = () => ({
    maxMessageBytes: ctx.config["limits.maxMessageBytes"],
    maxSubidLength: ctx.config["limits.maxSubidLength"],
    maxFilters: ctx.config["limits.maxFilters"],
  });

  /** The rate gate: true when the frame may proceed; otherwise it has been answered. */
  const metered = (conn: Conn, m: ClientMessage): boolean => {
    if (m.type === "CLOSE" || m.type === "AUTH" || m.type === "NEG-MSG" || m.type === "NEG-CLOSE")
      return true;
    // Opening a negentropy session costs what a REQ costs, and shares its bucket.
    const verb = m.type === "NEG-OPEN" ? "REQ" : m.type;
    if (ctx.rates.take(verb, conn.ip, conn.meter, conn.authed)) {
      conn.refusals = 0;
      return true;
    }
    const r = rateLimited(`slow down: too many ${m.type} messages`);
    if (m.type === "EVENT") {
      const id = (m.event as { id?: unknown }).id;
      conn.send(okReject(typeof id === "string" ? id : "", r));
    } else if (m.type === "NEG-OPEN") conn.send(negErrFrame(m.subId, r));
    else conn.send(closedFrame(m.subId, r));
    bump(ctx.counters.framesIn, "rate-limited");
    if (++conn.refusals >= ctx.config["rate.closeAfterRefusals"]) conn.close(1008, "rate-limited: flooding");
    return false;
  };

  const route = (conn: Conn, m: ClientMessage): void => {
    bump(ctx.counters.framesIn, m.type);
    if (!metered(conn, m)) return;
    switch (m.type) {
      case "EVENT":
        ingest.push(conn, m.event);
        return;
      case "REQ":
        void handleReq(ctx, conn, m.subId, m.filters);
        return;
      case "COUNT":
        void handleCount(ctx, conn, m.subId, m.filters);
        return;
      case "CLOSE":
        closeSubscription(ctx, conn, m.subId);
        return;
      case "AUTH":
        handleAuth(ctx, conn, m.event);
        return;
      case "NEG-OPEN":
        void handleNegOpen(ctx, conn, m.subId, m.filter, m.message);
        return;
      case "NEG-MSG":
        handleNegMsg(ctx, conn, m.subId, m.message);
        return;
      case "NEG-CLOSE":
        closeNeg(conn, m.subId);
        return;
      default:
        m satisfies never;
    }
  };

  const server = Bun.serve<ConnData>({
    hostname: c.host,
    port: c.port,
    reusePort: true,
    fetch(req, srv) {
      if (req.headers.get("upgrade")?.toLowerCase() === "websocket") {
        const ip = clientIp(ctx.config, srv.requestIP(req)?.address ?? "unknown", req.headers);
        if (ctx.moderation.blocksIp(ip)) {
          bump(ctx.counters.connectionsRefused, "blocked");
          log.debug("connection refused", { ip, reason: "this address is blocked" });
          return new Response("blocked: this address is blocked\n", { status: 403 });
        }
        if (!ctx.rates.connect(ip)) {
          bump(ctx.counters.connectionsRefused, "rate-limited");
          log.debug("connection refused", { ip, reason: "too many connections from this address" });
          return new Response("rate-limited: too many connections from this address\n", { status: 429 });
        }
        if (srv.upgrade(req, { data: { ip } })) return undefined;
        ctx.rates.disconnect(ip);
        return new Response("WebSocket upgrade failed\n", { status: 400 });
      }
      return handleHttp(req, ctx);
    },
    websocket: {
      // Frames a little over the limit still get a NOTICE; far larger ones close the socket (1009).
      maxPayloadLength: maxBytes * 4,
      idleTimeout: c["limits.idleTimeoutSeconds"],
      sendPings: true,
      backpressureLimit: c["limits.maxOutboundBytes"],
      closeOnBackpressureLimit: true,
      perMessageDeflate: false,
      open(ws) {
        const conn = new Conn(ws, ws.data.ip, ctx.counters.framesOut);
        ws.data.conn = conn;
        conns.add(conn);
        log.debug("connection opened", { conn: conn.id, ip: conn.ip, open: conns.size });
        challengeOnConnect(ctx, conn);
      },
      message(ws, data) {
        const conn = ws.data.conn!;
        challengeOnFrame(ctx, conn);
        const text = typeof data === "string" ? data : data.toString("utf8");
        const bytes = typeof data === "string" ? Buffer.byteLength(data) : data.byteLength;
        const m = readFrame(text, bytes, gate());
        if (m.type !== "unreadable") return route(conn, m);
        bump(ctx.counters.framesIn, "unreadable");
        if (m.eventId !== undefined) conn.send(okReject(m.eventId, m.reason));
        else if (m.negSubId !== undefined) {
          closeNeg(conn, m.negSubId);
          conn.send(negErrFrame(m.negSubId, closed(m.reason.message)));
        } else if (m.subId !== undefined) conn.send(closedFrame(m.subId, m.reason));
        else conn.send(noticeFrame(reasonText(m.reason)));
      },
      drain(ws) {
        ws.data.conn?.onDrain();
      },
      close(ws, code, reason) {
        const conn = ws.data.conn;
        if (!conn) return;
        log.debug("connection closed", { conn: conn.id, ip: conn.ip, code, reason: reason || undefined });
        conn.onClose();
        for (const subId of [...conn.subs.keys()]) closeSubscription(ctx, conn, subId);
        closeAllNegs(conn);
        conns.delete(conn);
        ctx.rates.disconnect(conn.ip);
      },
    },
  });
  return server;
}
