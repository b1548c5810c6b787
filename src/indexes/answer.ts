// What a stored query answers with: the stored JSON, or for a REQ the whole EVENT frame, built
// from the stored bytes behind the subscription's prefix (wire/frames.ts) in one copy and one
// decode, instead of a string of the JSON and a second one when the socket joins it to the
// prefix (docs/performance/2026-11.md, "A REQ's answer built from the stored bytes").

import { isAscii } from "node:buffer";
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

/**
 * A reader thread's frames for one REQ, to cross to the main thread as two strings and where
 * each frame ends in them (readers/). The frames of events whose stored JSON is ASCII (most)
 * are copied as bytes into one buffer, read once as a Latin-1 string: no string a frame here, and
 * Bun copies an 8-bit string between threads for ~0.2 us a KB. The others are decoded one by one
 * and joined: a string with any character past Latin-1 is 16-bit, and crosses for ~1.1 us a KB
 * (measured: docs/performance/2026-12.md), so they are kept apart from the first.
 */
export class FramePack {
  private narrow = Buffer.allocUnsafe(64 * 1024);
  private size = 0;
  readonly narrowEnds: number[] = [];
  private readonly wide: string[] = [];
  readonly wideEnds: number[] = [];
  private wideSize = 0;

  constructor(private readonly fp: FramePrefix) {}

  /** Adds the frame of a stored record; its number in the pack (even: narrow, odd: wide). */
  addBytes(b: Buffer): number {
    const n = b.length;
    if (!isAscii(b.subarray(0, n))) return this.addWide(answerOf(b, this.fp));
    const p = this.fp.bytes.length;
    this.room(p + n + 1);
    this.narrow.set(this.fp.bytes, this.size);
    b.copy(this.narrow, this.size + p, 0, n);
    this.narrow[this.size + p + n] = CLOSE_BRACKET;
    this.size += p + n + 1;
    this.narrowEnds.push(this.size);
    return 2 * (this.narrowEnds.length - 1);
  }

  /** Adds the frame of stored JSON already decoded. */
  addText(json: string): number {
    if (NOT_ASCII.test(json)) return this.addWide(eventFrame(this.fp.text, json));
    const frame = eventFrame(this.fp.text, json);
    this.room(frame.length);
    this.size += this.narrow.write(frame, this.size, "latin1");
    this.narrowEnds.push(this.size);
    return 2 * (this.narrowEnds.length - 1);
  }

  private addWide(frame: string): number {
    this.wide.push(frame);
    this.wideSize += frame.length;
    this.wideEnds.push(this.wideSize);
    return 2 * (this.wideEnds.length - 1) + 1;
  }

  private room(more: number): void {
    if (this.size + more <= this.narrow.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.size + more, this.narrow.length * 2));
    this.narrow.copy(grown, 0, 0, this.size);
    this.narrow = grown;
  }

  /** The narrow frames as one Latin-1 string, and the wide ones as another. */
  texts(): { narrow: string; wide: string } {
    return { narrow: this.narrow.toString("latin1", 0, this.size), wide: this.wide.join("") };
  }
}

const NOT_ASCII = /[^\x00-\x7f]/;

/** The frames of a pack (FramePack's texts and ends), by their numbers in it. */
export function unpack(
  texts: { narrow: string; wide: string },
  narrowEnds: ArrayLike<number>,
  wideEnds: ArrayLike<number>,
): (n: number) => string {
  return (n: number) => {
    const i = n >> 1;
    const [text, ends] = n & 1 ? [texts.wide, wideEnds] : [texts.narrow, narrowEnds];
    return text.slice(i === 0 ? 0 : ends[i - 1], ends[i]);
  };
}
