// The tokenizer's rules, one language or input shape at a time; the index and the queries both
// depend on these exact tokens.
import { describe, expect, test } from "bun:test";
import { fold, MAX_TOKEN, tokenize, urlHost } from "./tokenize.ts";

describe("tokenize", () => {
  test("English: lowercased words, punctuation dropped, numbers kept, possessives split", () => {
    expect(tokenize("The Quick brown fox's jumps, over 3.14 lazy dogs in 2024!")).toEqual([
      "the",
      "quick",
      "brown",
      "fox",
      "s",
      "jumps",
      "over",
      "3.14",
      "lazy",
      "dogs",
      "in",
      "2024",
    ]);
  });

  test("accents and compatibility forms fold; letters that are not accented stay", () => {
    expect(tokenize("Café naïve CRÈME brûlée Ångström Ｎｏｓｔｒ ﬁle İstanbul Straße")).toEqual([
      "cafe",
      "naive",
      "creme",
      "brulee",
      "angstrom",
      "nostr",
      "file",
      "istanbul",
      "straße",
    ]);
    expect(fold("ÉCOLE")).toBe(fold("école"));
  });

  test("Chinese and Japanese split into dictionary words", () => {
    expect(tokenize("我喜欢吃苹果和香蕉")).toEqual(["我", "喜欢", "吃", "苹果", "和", "香蕉"]);
    expect(tokenize("東京都に住んでいます。日本語の検索")).toEqual([
      "東京",
      "都",
      "に",
      "住",
      "んで",
      "い",
      "ます",
      "日本語",
      "の",
      "検索",
    ]);
  });

  test("Thai splits into words and keeps its vowel and tone marks", () => {
    expect(tokenize("สวัสดีครับ ผมชื่อสมชาย")).toEqual(["สวัสดี", "ครับ", "ผม", "ชื่อ", "สมชาย"]);
  });

  test("marks that are part of a script are not stripped (kana voicing, Devanagari, Hangul)", () => {
    expect(tokenize("ガギグ 한국어 हिन्दी")).toEqual(["ガギグ", "한국어", "हिन्दी"]);
  });

  test("a URL becomes its host, without www. and without the path", () => {
    expect(
      tokenize("see https://GitHub.com/nostr-protocol/nips/blob/master/50.md?x=1#y and www.example.org/path"),
    ).toEqual(["github.com", "example.org", "see", "and"]);
    expect(tokenize("(https://sub.domain.io).")).toEqual(["sub.domain.io"]);
    expect(urlHost("https://www.Example.COM./x")).toBe("example.com");
    expect(urlHost("https://[bad")).toBeUndefined();
  });

  test("bare domains and email addresses stay whole; @ splits an address", () => {
    expect(tokenize("visit nostr.com or mail bob@example.com")).toEqual([
      "visit",
      "nostr.com",
      "or",
      "mail",
      "bob",
      "example.com",
    ]);
  });

  test("NIP-19 entities are dropped, with or without nostr:", () => {
    const npub = "npub180cvv07tjdrrgpa0j7j7tmnyl2yr6yr7l8j4s3evf6u64th6gkwsyjh6w6";
    expect(tokenize(`hi nostr:${npub} and ${npub} note1qqqqqqqqqqqqqqqqqqq end`)).toEqual([
      "hi",
      "and",
      "end",
    ]);
  });

  test(`tokens are cut at ${MAX_TOKEN} code points, not dropped`, () => {
    const [a, b] = tokenize(`${"x".repeat(50)} ${"é".repeat(45)}`);
    expect(a).toBe("x".repeat(MAX_TOKEN));
    expect(b).toBe("e".repeat(MAX_TOKEN));
    expect([...tokenize("𝒳".repeat(60))[0]!].length).toBe(MAX_TOKEN);
  });

  test("emoji and symbols are not words; colons and hashtags split", () => {
    expect(tokenize("emoji 🎉🎉 #hashtag at 12:30 key:value")).toEqual([
      "emoji",
      "hashtag",
      "at",
      "12",
      "30",
      "key",
      "value",
    ]);
  });

  test("empty and blank text have no tokens", () => {
    expect(tokenize("")).toEqual([]);
    expect(tokenize("  … !! ")).toEqual([]);
  });
});

describe("the ASCII fast path", () => {
  test("gives exactly the segmenter's tokens on random ASCII text", async () => {
    const { segmenterWords, tokenize } = await import("./tokenize.ts");
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const alphabet = "abZ19_.:',; -!?\"()#@\n\t/";
    const mismatches: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      let text = "";
      const len = 1 + Math.floor(rnd() * 14);
      for (let j = 0; j < len; j++) text += alphabet[Math.floor(rnd() * alphabet.length)];
      const fast = tokenize(text);
      const slow = segmenterWords(text);
      if (JSON.stringify(fast) !== JSON.stringify(slow) && mismatches.length < 10)
        mismatches.push(`${JSON.stringify(text)}: ${JSON.stringify(fast)} vs ${JSON.stringify(slow)}`);
    }
    expect(mismatches).toEqual([]);
  });

  test("cuts long words and joined runs as the segmenter path does", async () => {
    const { segmenterWords, tokenize } = await import("./tokenize.ts");
    const long = "x".repeat(45);
    for (const text of [
      long,
      `${long}.${long}`,
      `a ${long} b`,
      `12,345.${"9".repeat(50)}`,
      `don't ${"y".repeat(39)}'s`,
      "_ __ a_b _x_",
    ])
      expect(tokenize(text)).toEqual(segmenterWords(text));
  });
});
