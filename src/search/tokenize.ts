// Text → search tokens. Stored events and queries go through the same function, so whatever it
// folds or drops, it does so on both sides. Rules, in order:
//
//  1. URLs (scheme:// or www.) become one token: their host, lowercased, without `www.`; the
//     path, query and fragment are dropped as noise (`https://github.com/a/b?c` → `github.com`).
//  2. NIP-19 bech32 entities (`npub1…`, `note1…`, `nevent1…` …, with or without `nostr:`) are
//     dropped: they are references, not words, and whoever they name is in the tags anyway.
//  3. Case and diacritics are folded: lowercase, NFKD (so full-width `ＡＢＣ` is `abc` and `ﬁ` is
//     `fi`), the Latin/Greek/Cyrillic combining accents removed (`café` = `cafe`), then NFC again.
//     Only those accent blocks are stripped: Thai vowels, Devanagari signs or Japanese dakuten are
//     combining marks too, but removing them would change the word.
//  4. Words come from Intl.Segmenter (ICU word boundaries, with dictionaries for Thai, Chinese,
//     Japanese, Khmer…), keeping only word-like segments: numbers stay (`2024`, `3.14`),
//     punctuation and emoji go. Segments are further split at `'` and `:` (UAX #29 keeps
//     `don't` and `a:b` whole; splitting lets `nostr's` match `nostr`).
//  5. A token is cut to its first MAX_TOKEN code points (cut, not dropped, so a query for the
//     same long word still matches).

/** Bumped whenever the rules above change: stored postings must then be rebuilt (`relay reindex`). */
export const TOKENIZER_VERSION = 1;
export const MAX_TOKEN = 40;

const URL_RE = /\b(?:(?:https?|wss?|ftp):\/\/|www\.)[^\s<>"'`]+/gi;
const BECH32_RE = /(?:\bnostr:)?\b(?:npub|nsec|note|nprofile|nevent|naddr|nrelay)1[02-9ac-hj-np-z]{6,}\b/gi;
const ACCENTS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;
const SPLIT = /['’‘:]+/;
const segmenter = new Intl.Segmenter("en", { granularity: "word" });

/** Case and accent folding (rule 3). */
export function fold(s: string): string {
  return s.toLowerCase().normalize("NFKD").replace(ACCENTS, "").normalize("NFC").toLowerCase();
}

/** The host a URL names, folded, without `www.`; undefined when it does not parse. */
export function urlHost(url: string): string | undefined {
  try {
    const u = new URL(/^www\./i.test(url) ? `http://${url}` : url);
    const host = fold(u.hostname)
      .replace(/^www\./, "")
      .replace(/\.$/, "");
    return host === "" ? undefined : cut(host);
  } catch {
    return undefined;
  }
}

function cut(token: string): string {
  if (token.length <= MAX_TOKEN) return token;
  let out = "";
  let n = 0;
  for (const ch of token) {
    if (n++ === MAX_TOKEN) break;
    out += ch;
  }
  return out;
}

// UAX #29 word rules restricted to ASCII (letters, digits and `_` join; `.` `:` `'` join two
// letters; `.` `,` `;` `'` join two digits), so plain-ASCII text skips Intl.Segmenter, which
// costs most of the indexing time. A test checks it against the segmenter on random text.
const ASCII_WORD = /[a-z0-9_]+(?:(?:(?<=[a-z])[.:'](?=[a-z])|(?<=[0-9])[.,;'](?=[0-9]))[a-z0-9_]+)*/g;

const ONLY_UNDERSCORES = /^_$/;

/** Character classes of the ASCII path: 0 separator, 1 word character, 2 joiner (`.:',;`). */
const CLASS = new Uint8Array(128);
for (let c = 97; c <= 122; c++) CLASS[c] = 1;
for (let c = 48; c <= 57; c++) CLASS[c] = 1;
CLASS[95] = 1;
for (const ch of ".:',;") CLASS[ch.charCodeAt(0)] = 2;

/**
 * Tokens of lowercased ASCII text. Runs of word and joiner characters are the candidates; most
 * hold no joiner and are a word as they are (one scan, one slice each). Only runs holding a
 * joiner go through the rules. Returns false, having added nothing, when `lower` is not ASCII.
 */
function asciiWords(lower: string, out: string[]): boolean {
  const n = lower.length;
  for (let i = 0; i < n; i++) if (lower.charCodeAt(i) > 0x7f) return false;
  let i = 0;
  while (i < n) {
    while (i < n && CLASS[lower.charCodeAt(i)] === 0) i++;
    if (i === n) break;
    const start = i;
    let joiner = false;
    for (; i < n; i++) {
      const k = CLASS[lower.charCodeAt(i)];
      if (k === 0) break;
      if (k === 2) joiner = true;
    }
    if (joiner) asciiRuleWords(lower.slice(start, i), out);
    else if (i - start === 1 && lower.charCodeAt(start) === 95)
      continue; // a lone "_" is no word
    else out.push(lower.slice(start, Math.min(i, start + MAX_TOKEN)));
  }
  return true;
}

function asciiRuleWords(lower: string, out: string[]): string[] {
  for (const m of lower.matchAll(ASCII_WORD)) {
    const word = m[0];
    if (ONLY_UNDERSCORES.test(word)) continue; // a lone "_" is not word-like for ICU either
    if (!SPLIT.test(word)) {
      out.push(cut(word));
      continue;
    }
    for (const part of word.split(SPLIT)) if (part !== "") out.push(cut(part));
  }
  return out;
}

/** The tokens Intl.Segmenter gives for folded text (the general path; exported for tests). */
export function segmenterWords(text: string, out: string[] = []): string[] {
  for (const seg of segmenter.segment(fold(text))) {
    if (!seg.isWordLike) continue;
    const word = seg.segment;
    if (!SPLIT.test(word)) {
      out.push(cut(word));
      continue;
    }
    for (const part of word.split(SPLIT)) if (part !== "") out.push(cut(part));
  }
  return out;
}

/** Appends the tokens of `text` to `out` (duplicates kept, in text order) and returns `out`. */
export function tokenize(text: string, out: string[] = []): string[] {
  if (text === "") return out;
  let rest = text;
  if (rest.includes("://") || /www\./i.test(rest)) {
    rest = rest.replace(URL_RE, (url) => {
      const host = urlHost(url.replace(/[.,;:!?)\]}]+$/, ""));
      if (host) out.push(host);
      return " ";
    });
  }
  // Every NIP-19 entity has a "1" between its prefix and its data.
  if (rest.includes("1")) rest = rest.replace(BECH32_RE, " ");
  if (asciiWords(rest.toLowerCase(), out)) return out;
  return segmenterWords(rest, out);
}
