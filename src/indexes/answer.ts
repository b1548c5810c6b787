// What a stored query answers with: the stored JSON, or for a REQ the whole EVENT frame, built
// from the stored bytes behind the subscription's prefix (wire/frames.ts) in one copy and one
// decode, instead of a string of the JSON and a second one when the socket joins it to the
// prefix (docs/performance.md, "A REQ's answer built from the stored bytes").
import { STORED_ID_OFFSET } from "../nostr/canonical.ts";
import { eventFrame } from "../wire/frames.ts";

/** The start of a subscription's EVENT frames, as text and as UTF-8. */
export interface FramePrefix {
  text: string;
  bytes: Buffer;
}

// lmdb-js sets `length` on its shared buffer to the value's size: decode that much, not the buffer.
export const text = (b: Buffer): string => b.toString("utf8", 0, b.length);

let scratch = Buffer.allocUnsafe(64 * 1024);
const CLOSE_BRACKET = 0x5d;

/** The answer for a stored record: its JSON, or its whole frame (one copy, one decode). */
export function answerOf(b: Buffer, fp: FramePrefix | undefined): string {
  if (!fp) return text(b);
  const n = b.length;
  const p = fp.bytes.length;
  const size = p + n + 1;
  if (size > scratch.length) scratch = Buffer.allocUnsafe(Math.max(size, scratch.length * 2));
  scratch.set(fp.bytes, 0);
  b.copy(scratch, p, 0, n);
  scratch[p + n] = CLOSE_BRACKET;
  return scratch.toString("utf8", 0, size);
}

/** The answer for stored JSON already decoded (matched on its text, or not yet indexed). */
export const answerOfText = (json: string, fp: FramePrefix | undefined): string =>
  fp ? eventFrame(fp.text, json) : json;

/** Where the id starts in an answer. */
export const idAt = (fp: FramePrefix | undefined): number => STORED_ID_OFFSET + (fp ? fp.text.length : 0);
