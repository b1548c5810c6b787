// Every refusal the relay gives, with the standard NIP-01 machine-readable prefixes.
// Other modules build a Reject; only the wire module turns it into a frame.

const PREFIXES = [
  "invalid",
  "duplicate",
  "blocked",
  "rate-limited",
  "restricted",
  "auth-required",
  "pow",
  "mute",
  "error",
  "unsupported",
  // NIP-77: a negentropy session ended by the relay
  "closed",
] as const;

export type Prefix = (typeof PREFIXES)[number];

const isPrefix = (p: string): p is Prefix => (PREFIXES as readonly string[]).includes(p);

export interface Reject {
  readonly reject: true;
  readonly prefix: Prefix;
  readonly message: string;
}

const make =
  (prefix: Prefix) =>
  (message: string): Reject => ({ reject: true, prefix, message });

export const invalid = make("invalid");
export const duplicate = make("duplicate");
export const blocked = make("blocked");
export const rateLimited = make("rate-limited");
export const restricted = make("restricted");
export const authRequired = make("auth-required");
export const pow = make("pow");
export const mute = make("mute");
export const error = make("error");
export const unsupported = make("unsupported");
export const closed = make("closed");

export const isReject = (x: unknown): x is Reject =>
  typeof x === "object" && x !== null && (x as Reject).reject === true;

export const reasonText = (r: Reject): string => `${r.prefix}: ${r.message}`;

/**
 * A refusal whose text comes from outside the relay (a policy plugin's `msg`): kept as it is
 * when it starts with a NIP-01 prefix, else given `prefix`; `empty` stands for no text at all.
 */
export function outsideReason(text: string, prefix: Prefix, empty: string): Reject {
  const at = text.indexOf(": ");
  const p = at > 0 ? text.slice(0, at) : "";
  if (isPrefix(p)) return make(p)(text.slice(at + 2));
  return make(prefix)(text || empty);
}

/** What a client is told when an event's id or signature does not check out. */
export const failedVerification = (r: "bad-id" | "bad-sig"): Reject =>
  invalid(
    r === "bad-id"
      ? "event id does not match the sha256 of its serialization"
      : "signature verification failed",
  );

// The unclear cases, decided once.
/** A stored event sent again: OK true with this message, and it is not broadcast again. */
export const ALREADY_HAVE = "duplicate: already have this event";
/** An older version of a replaceable or addressable event than the one stored. */
export const olderVersion = () => duplicate("have a newer version of this replaceable event");
