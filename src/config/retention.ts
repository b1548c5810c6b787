// The shape of `retention.rules`: NIP-11's own `retention` list, checked once at load so that
// what the relay enforces and what it advertises are the same value. A rule is
// `{kinds?, time?, count?}`: kinds as numbers or inclusive `[from, to]` ranges (absent: every
// kind), `time` in seconds and `count` in events (absent or null: no limit; 0: not kept at all).

/** What is wrong with a rule (check.ts turns it into the key's CheckError). */
export class RuleError extends Error {}

export type KindSpec = number | [from: number, to: number];

export interface RetentionRule {
  kinds?: KindSpec[];
  time?: number | null;
  count?: number | null;
}

const MAX_KIND = 65535;
const FIELDS = new Set(["kinds", "time", "count"]);

const isKind = (x: unknown): x is number =>
  Number.isSafeInteger(x) && (x as number) >= 0 && (x as number) <= MAX_KIND;

function kindSpec(x: unknown, where: string): KindSpec {
  if (isKind(x)) return x;
  if (Array.isArray(x) && x.length === 2 && isKind(x[0]) && isKind(x[1])) {
    if (x[0] > x[1]) throw new RuleError(`${where}: the range [${x[0]}, ${x[1]}] starts after it ends`);
    return [x[0], x[1]];
  }
  throw new RuleError(
    `${where}: ${JSON.stringify(x)} is neither a kind (0 to ${MAX_KIND}) nor a [from, to] range of kinds`,
  );
}

function limit(x: unknown, where: string, unit: string): number | null {
  if (x === null) return null;
  if (Number.isSafeInteger(x) && (x as number) >= 0) return x as number;
  throw new RuleError(
    `${where} must be a whole number of ${unit}, 0 or more (or null for no limit), got ${JSON.stringify(x)}`,
  );
}

/** The rules as written, checked: a CheckError names the rule (from 1) and what is wrong. */
export function checkRetentionRules(raw: unknown): RetentionRule[] {
  if (!Array.isArray(raw)) throw new RuleError("expected a list of rules like [{kinds = [1], time = 3600}]");
  return raw.map((r: unknown, i): RetentionRule => {
    const where = `rule ${i + 1}`;
    if (typeof r !== "object" || r === null || Array.isArray(r))
      throw new RuleError(
        `${where} must be a table like {kinds = [1], time = 3600}, got ${JSON.stringify(r)}`,
      );
    for (const k of Object.keys(r))
      if (!FIELDS.has(k))
        throw new RuleError(`${where}: unknown field '${k}' (a rule has kinds, time and count)`);
    const o = r as Record<string, unknown>;
    const out: RetentionRule = {};
    if (o.kinds !== undefined) {
      if (!Array.isArray(o.kinds) || o.kinds.length === 0)
        throw new RuleError(`${where}: kinds must be a non-empty list (leave it out for every kind)`);
      out.kinds = o.kinds.map((x) => kindSpec(x, `${where} kinds`));
    }
    if (o.time !== undefined) out.time = limit(o.time, `${where}: time`, "seconds");
    if (o.count !== undefined) out.count = limit(o.count, `${where}: count`, "events");
    return out;
  });
}
