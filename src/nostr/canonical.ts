// Canonical forms of an event: the NIP-01 commitment hashed into the id, and the stored JSON
// that every client receives verbatim. Both are produced once per accepted event.
import type { NostrEvent } from "./event.ts";

// JSON.stringify escapes control characters other than \b \t \n \f \r as \u00XX, but NIP-01
// requires every character except the seven listed to be hashed verbatim. Undo just those escapes
// (a preceding escaped backslash is skipped by matching `\\\\` first).
const CONTROL_ESCAPE = /\\\\|\\u00([01][0-9a-f])/g;
function unescapeControls(json: string): string {
  if (json.indexOf("\\u00") === -1) return json;
  return json.replace(CONTROL_ESCAPE, (m, hex: string | undefined) =>
    hex === undefined ? m : String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

/** The exact string whose UTF-8 sha256 is the event id. */
export function commitment(e: NostrEvent): string {
  return unescapeControls(
    `[0,"${e.pubkey}",${e.created_at},${e.kind},${JSON.stringify(e.tags)},${JSON.stringify(e.content)}]`,
  );
}

/** sha256 of the commitment, lowercase hex. */
export function computeId(e: NostrEvent): string {
  return new Bun.CryptoHasher("sha256").update(commitment(e)).digest("hex");
}

/**
 * Stored form: fixed key order, id first, so `id` sits at bytes 7..71 and `pubkey` at 83..147
 * of every stored record (readers take them without parsing).
 */
export function storedJson(e: NostrEvent): string {
  return `{"id":"${e.id}","pubkey":"${e.pubkey}","created_at":${e.created_at},"kind":${e.kind},"tags":${JSON.stringify(e.tags)},"content":${JSON.stringify(e.content)},"sig":"${e.sig}"}`;
}

export const STORED_ID_OFFSET = 7;
export const STORED_PUBKEY_OFFSET = 83;

/** The kind of a stored record, read without parsing (it follows created_at at a known place). */
export function storedKind(json: string): number {
  const at = json.indexOf(',"kind":', STORED_PUBKEY_OFFSET + 64);
  return Number.parseInt(json.slice(at + 8, at + 14), 10);
}
