// The client-to-relay vocabulary and the one gate every frame passes: size, JSON, verb and
// arity. Field-level checks (events, filters) happen in the handlers with the same Reject type.

import type { Reject } from "../wire/reasons.ts";
import { invalid } from "../wire/reasons.ts";

export type ClientMessage =
  | { type: "EVENT"; event: unknown }
  | { type: "REQ"; subId: string; filters: unknown[] }
  | { type: "COUNT"; subId: string; filters: unknown[] }
  | { type: "CLOSE"; subId: string }
  | { type: "AUTH"; event: unknown }
  | { type: "NEG-OPEN"; subId: string; filter: unknown; message: string }
  | { type: "NEG-MSG"; subId: string; message: string }
  | { type: "NEG-CLOSE"; subId: string };

/** A frame that could not be understood; answered with NOTICE (or OK false when an id is known). */
export interface Unreadable {
  type: "unreadable";
  /** why, as an `invalid:` refusal (sent as a NOTICE, an OK, a CLOSED or a NEG-ERR) */
  reason: Reject;
  /** set when the frame was an EVENT whose id could be read, so the answer can be an OK */
  eventId?: string;
  /** set when the frame was a REQ/COUNT with a readable id, so the answer can be a CLOSED */
  subId?: string;
  /** set when the frame was a NEG-* with a readable id, so the answer can be a NEG-ERR */
  negSubId?: string;
}

export interface GateLimits {
  maxMessageBytes: number;
  maxSubidLength: number;
  maxFilters: number;
}

const unreadable = (message: string, extra: Partial<Unreadable> = {}): Unreadable => ({
  type: "unreadable",
  reason: invalid(message),
  ...extra,
});

export function readFrame(text: string, byteLength: number, lim: GateLimits): ClientMessage | Unreadable {
  if (byteLength > lim.maxMessageBytes)
    return unreadable(`message is larger than ${lim.maxMessageBytes} bytes`);
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return unreadable("message is not valid JSON");
  }
  if (!Array.isArray(msg) || typeof msg[0] !== "string")
    return unreadable("message must be a JSON array whose first element is a verb");
  const verb = msg[0];
  switch (verb) {
    case "EVENT":
    case "AUTH": {
      if (msg.length !== 2 || typeof msg[1] !== "object" || msg[1] === null || Array.isArray(msg[1])) {
        const id = (msg[1] as { id?: unknown } | undefined)?.id;
        return unreadable(`${verb} must be ["${verb}", <event object>]`, {
          eventId: typeof id === "string" ? id : undefined,
        });
      }
      return { type: verb, event: msg[1] };
    }
    case "REQ":
    case "COUNT": {
      const subId = msg[1];
      if (typeof subId !== "string" || subId.length === 0)
        return unreadable(`${verb} needs a non-empty subscription id string`);
      if (subId.length > lim.maxSubidLength)
        return unreadable(`subscription id is longer than ${lim.maxSubidLength} characters`);
      const filters = msg.slice(2);
      if (filters.length === 0) return unreadable(`${verb} needs at least one filter`, { subId });
      if (filters.length > lim.maxFilters)
        return unreadable(`more than ${lim.maxFilters} filters`, { subId });
      return { type: verb, subId, filters };
    }
    case "CLOSE": {
      const subId = msg[1];
      if (msg.length !== 2 || typeof subId !== "string")
        return unreadable('CLOSE must be ["CLOSE", <subscription id>]');
      return { type: "CLOSE", subId };
    }
    case "NEG-OPEN":
    case "NEG-MSG":
    case "NEG-CLOSE": {
      const subId = msg[1];
      if (typeof subId !== "string" || subId.length === 0)
        return unreadable(`${verb} needs a non-empty subscription id string`);
      if (subId.length > lim.maxSubidLength)
        return unreadable(`subscription id is longer than ${lim.maxSubidLength} characters`);
      const negSubId = subId;
      if (verb === "NEG-CLOSE") {
        if (msg.length !== 2) return unreadable('NEG-CLOSE must be ["NEG-CLOSE", <subscription id>]');
        return { type: verb, subId };
      }
      if (verb === "NEG-MSG") {
        if (msg.length !== 3 || typeof msg[2] !== "string")
          return unreadable('NEG-MSG must be ["NEG-MSG", <subscription id>, <hex message>]', {
            negSubId,
          });
        return { type: verb, subId, message: msg[2] };
      }
      if (msg.length !== 4 || typeof msg[3] !== "string")
        return unreadable('NEG-OPEN must be ["NEG-OPEN", <subscription id>, <filter>, <hex message>]', {
          negSubId,
        });
      return { type: verb, subId, filter: msg[2], message: msg[3] };
    }
    default:
      return unreadable(`unknown message type ${JSON.stringify(verb.slice(0, 32))}`);
  }
}
