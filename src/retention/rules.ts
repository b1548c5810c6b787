// The retention rules as the relay applies them (config/retention.ts checks their shape). Which
// rule governs a kind: the first whose kinds include it, a rule without kinds covering every
// kind (so `[{kinds: [0, 3]}, {time: 86400}]` keeps profiles and follows forever and everything
// else a day, and NIP-11's own example reads as written). A `count` limits the events of all the
// kinds its rule governs together, keeping the newest in NIP-01 order (created_at, then the
// lowest id); a `time` keeps an event that many seconds after its created_at. Also the verdict
// on an arriving event: one already past its rule is refused rather than stored and removed.
import type { KindSpec, RetentionRule } from "../config/retention.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Reject } from "../wire/reasons.ts";
import { blocked } from "../wire/reasons.ts";

/** The oldest event a full count rule keeps: anything older in NIP-01 order is past the rule. */
export interface Floor {
  time: number;
  id: string;
}

export interface Rule {
  /** 1-based, as operators and the messages count them */
  n: number;
  spec: RetentionRule;
  /** seconds after created_at, undefined: no time limit */
  time: number | undefined;
  /** events of the rule's kinds together, undefined: no count limit */
  count: number | undefined;
  /** the rule as written (NIP-11 JSON), for messages */
  text: string;
}

const covers = (specs: readonly KindSpec[] | undefined, kind: number): boolean =>
  specs === undefined ||
  specs.some((k) => (typeof k === "number" ? k === kind : kind >= k[0] && kind <= k[1]));

const limitOf = (x: number | null | undefined): number | undefined =>
  x === null || x === undefined ? undefined : x;

/** Seconds as an operator reads them: 3600 → "1 hour", 90 → "90 seconds". */
export function fmtSeconds(s: number): string {
  const units: [number, string][] = [
    [86400, "day"],
    [3600, "hour"],
    [60, "minute"],
  ];
  for (const [size, name] of units)
    if (s >= size && s % size === 0) return `${s / size} ${name}${s === size ? "" : "s"}`;
  return `${s} second${s === 1 ? "" : "s"}`;
}

export class RetentionRules {
  readonly rules: Rule[];
  /** governing rule by kind, filled as kinds are met (at most 65,536 entries) */
  private readonly byKind = new Map<number, Rule | null>();
  /** per count rule, the oldest event it keeps while it holds `count` events (set by the sweep) */
  private readonly floors = new Map<number, Floor>();

  constructor(readonly specs: readonly RetentionRule[]) {
    this.rules = specs.map((spec, i) => ({
      n: i + 1,
      spec,
      time: limitOf(spec.time),
      count: limitOf(spec.count),
      text: JSON.stringify(spec),
    }));
  }

  get empty(): boolean {
    return this.rules.length === 0;
  }

  /** The rule that governs a kind, or undefined: kept for good. */
  ruleFor(kind: number): Rule | undefined {
    let r = this.byKind.get(kind);
    if (r === undefined) {
      r = this.rules.find((x) => covers(x.spec.kinds, kind)) ?? null;
      this.byKind.set(kind, r);
    }
    return r ?? undefined;
  }

  /** Groups kinds by the rule that governs them (kinds no rule governs are left out). */
  governed(kinds: Iterable<number>): Map<Rule, number[]> {
    const out = new Map<Rule, number[]>();
    for (const k of kinds) {
      const r = this.ruleFor(k);
      if (!r) continue;
      const list = out.get(r);
      if (list) list.push(k);
      else out.set(r, [k]);
    }
    for (const list of out.values()) list.sort((a, b) => a - b);
    return out;
  }

  /** Set by the sweep: the oldest event a count rule keeps, or undefined while it has room. */
  setFloor(r: Rule, floor: Floor | undefined): void {
    if (floor) this.floors.set(r.n, floor);
    else this.floors.delete(r.n);
  }

  floor(r: Rule): Floor | undefined {
    return this.floors.get(r.n);
  }

  /**
   * Why an arriving event is already past its rule (`blocked: …`), or undefined. `now` in
   * seconds. Cheap: the writer asks it for every event, inside its transaction.
   */
  verdict(e: NostrEvent, now: number): Reject | undefined {
    if (this.rules.length === 0) return undefined;
    const r = this.ruleFor(e.kind);
    if (!r) return undefined;
    const which = `retention rule ${r.n}: ${r.text}`;
    if (r.time === 0 || r.count === 0)
      return blocked(`this relay does not keep kind ${e.kind} events (${which})`);
    if (r.time !== undefined && e.created_at < now - r.time)
      return blocked(
        `this relay keeps kind ${e.kind} events for ${fmtSeconds(r.time)} after their created_at, and this one is older (${which})`,
      );
    const f = r.count === undefined ? undefined : this.floors.get(r.n);
    if (f && (e.created_at < f.time || (e.created_at === f.time && e.id > f.id)))
      return blocked(
        `this relay keeps the newest ${r.count} events of the kinds this rule covers, and this kind ${e.kind} event is older than all of them (${which})`,
      );
    return undefined;
  }
}
