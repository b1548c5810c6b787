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
  return commitmentOf(e, JSON.stringify(e.tags), JSON.stringify(e.content));
}

/** The commitment from the JSON of the tags and of the content (serialised once per event). */
export function commitmentOf(e: NostrEvent, tags: string, content: string): string {
  return unescapeControls(`[0,"${e.pubkey}",${e.created_at},${e.kind},${tags},${content}]`);
}

/**
 * Writes the commitment's UTF-8 bytes into `out` at `at` without building it as a string, and
 * returns the end offset. `out` must have room for 3 bytes per UTF-16 unit plus 64.
 */
export function encodeCommitment(
  e: NostrEvent,
  tags: string,
  content: string,
  out: Buffer,
  at: number,
): number {
  if (tags.indexOf("\\u00") !== -1 || content.indexOf("\\u00") !== -1)
    return at + out.write(commitmentOf(e, tags, content), at, "utf8");
  at += out.write('[0,"', at, "latin1");
  at += out.write(e.pubkey, at, "latin1");
  at += out.write(`",${e.created_at},${e.kind},`, at, "latin1");
  at += out.write(tags, at, "utf8");
  out[at++] = 0x2c; // ,
  at += out.write(content, at, "utf8");
  out[at++] = 0x5d; // ]
  return at;
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
  return storedJsonOf(e, JSON.stringify(e.tags), JSON.stringify(e.content));
}

/** The stored form from the JSON of the tags and of the content. */
export function storedJsonOf(e: NostrEvent, tags: string, content: string): string {
  return `{"id":"${e.id}","pubkey":"${e.pubkey}","created_at":${e.created_at},"kind":${e.kind},"tags":${tags},"content":${content},"sig":"${e.sig}"}`;
}

export const STORED_ID_OFFSET = 7;
export const STORED_PUBKEY_OFFSET = 83;
/** where created_at's digits start: after `","created_at":` */
export const STORED_CREATED_AT_OFFSET = 162;

const KIND_MARK = ',"kind":';
const KIND_MARK_BYTES = Buffer.from(KIND_MARK);

/** The non-negative integer whose digits start at `at`, from the text or the stored bytes. */
function digitsAt(json: string | Buffer, at: number): number {
  const text = typeof json === "string";
  let n = 0;
  for (;;) {
    const c = text ? json.charCodeAt(at) : json[at]!;
    if (!(c >= 48 && c <= 57)) return n;
    n = n * 10 + (c - 48);
    at++;
  }
}

/**
 * The kind of a stored record, read without parsing (it follows created_at, after the pubkey):
 * from the text, or from the stored bytes without decoding them.
 */
export function storedKind(json: string | Buffer): number {
  const at =
    typeof json === "string"
      ? json.indexOf(KIND_MARK, STORED_PUBKEY_OFFSET + 64)
      : json.indexOf(KIND_MARK_BYTES, STORED_PUBKEY_OFFSET + 64);
  return digitsAt(json, at + KIND_MARK.length);
}

/** The created_at of a stored record, read without parsing. */
export const storedCreatedAt = (json: string | Buffer): number => digitsAt(json, STORED_CREATED_AT_OFFSET);
