// The NIP-11 relay information document, built from the same configuration numbers the gate
// enforces, so what is advertised is what is applied.
import pkg from "../../package.json" with { type: "json" };
import type { Config } from "../config/schema.ts";

/** NIPs that work end to end on this build. */
export const SUPPORTED_NIPS = [1, 9, 11, 40, 42, 45, 62, 70, 77];

/** What operators set through NIP-86 (src/manage/moderation.ts): it overrides the configuration. */
export interface ManagedInfo {
  info(): Partial<Record<"name" | "description" | "icon", string>>;
  readonly restrictsWrites: boolean;
}

export function relayInfo(c: Config, managed?: ManagedInfo): Record<string, unknown> {
  const extra = c["nip11.extraNips"].map(Number).filter(Number.isInteger);
  if (c["management.admins"].length > 0) extra.push(86); // NIP-86, callable once someone may call it
  const set = managed?.info() ?? {};
  if (c["pow.minDifficulty"] > 0) extra.push(13);
  if (c["search.enabled"]) extra.push(50); // NIP-50 search, unless switched off
  const info: Record<string, unknown> = {
    name: set.name ?? c["info.name"],
    description: set.description ?? c["info.description"],
    software: pkg.name,
    version: pkg.version,
    supported_nips: [...new Set([...SUPPORTED_NIPS, ...extra])].sort((a, b) => a - b),
    limitation: {
      max_message_length: c["limits.maxMessageBytes"],
      max_subscriptions: c["limits.maxSubscriptions"],
      max_filters: c["limits.maxFilters"],
      max_limit: c["limits.maxLimit"],
      default_limit: c["limits.defaultLimit"],
      max_subid_length: c["limits.maxSubidLength"],
      max_event_tags: c["limits.maxEventTags"],
      max_content_length: c["limits.maxContentLength"],
      min_pow_difficulty: c["pow.minDifficulty"],
      auth_required: c["auth.reads"] || c["auth.writes"],
      payment_required: false,
      restricted_writes:
        c["auth.writes"] ||
        c["policy.pubkeyAllow"].length > 0 ||
        c["policy.kindAllow"].length > 0 ||
        c["policy.plugin"] !== "" ||
        managed?.restrictsWrites === true,
      created_at_lower_limit: c["limits.createdAtPastSeconds"],
      created_at_upper_limit: c["limits.createdAtFutureSeconds"],
    },
  };
  // NIP-11 retention: the rules the relay enforces (src/retention/), as the operator wrote them.
  if (c["retention.rules"].length > 0) info.retention = c["retention.rules"];
  if (c["info.pubkey"]) info.pubkey = c["info.pubkey"];
  if (c["info.contact"]) info.contact = c["info.contact"];
  const icon = set.icon ?? c["info.icon"];
  if (icon) info.icon = icon;
  return info;
}
