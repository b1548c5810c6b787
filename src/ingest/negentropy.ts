// NIP-77 negentropy sync, not implemented yet: NEG-OPEN and NEG-MSG are answered with NEG-ERR
// `unsupported:` so clients stop waiting (nostr-tools waited forever on the NOTICE it got before);
// NEG-CLOSE has no session to close and gets no answer. @welshman/net 0.8.15 listens for
// "NEG-ERROR", which NIP-77 does not define, so it still waits out its 30 s and reports "in sync".
// The NIP-77 implementation replaces this file.
import type { Conn } from "../server/connection.ts";
import { negErrFrame } from "../wire/frames.ts";
import { unsupported } from "../wire/reasons.ts";
import type { ClientMessage } from "./messages.ts";

export type NegMessage = Extract<ClientMessage, { type: "NEG-OPEN" | "NEG-MSG" | "NEG-CLOSE" }>;

export function handleNeg(conn: Conn, m: NegMessage): void {
  if (m.type === "NEG-CLOSE") return;
  conn.send(negErrFrame(m.subId, unsupported("negentropy sync (NIP-77) is not available on this relay")));
}
