// The only module that writes relay-to-client frames. EVENT frames are built from the stored
// JSON text verbatim, behind a per-subscription prefix computed once.
import type { Reject } from "./reasons.ts";
import { reasonText } from "./reasons.ts";

export const eventPrefix = (subId: string): string => `["EVENT",${JSON.stringify(subId)},`;
export const eventFrame = (prefix: string, storedJson: string): string => `${prefix}${storedJson}]`;

export const okFrame = (id: string, accepted: boolean, message: string): string =>
  `["OK",${JSON.stringify(id)},${accepted},${JSON.stringify(message)}]`;
export const okReject = (id: string, r: Reject): string => okFrame(id, false, reasonText(r));

export const eoseFrame = (subId: string): string => `["EOSE",${JSON.stringify(subId)}]`;
export const closedFrame = (subId: string, r: Reject): string =>
  `["CLOSED",${JSON.stringify(subId)},${JSON.stringify(reasonText(r))}]`;
export const noticeFrame = (message: string): string => `["NOTICE",${JSON.stringify(message)}]`;
export const countFrame = (subId: string, count: number, approximate = false, hll?: string): string =>
  `["COUNT",${JSON.stringify(subId)},{"count":${count}${approximate ? ',"approximate":true' : ""}${hll ? `,"hll":"${hll}"` : ""}}]`;
export const authFrame = (challenge: string): string => `["AUTH",${JSON.stringify(challenge)}]`;
export const negMsgFrame = (subId: string, hex: string): string =>
  `["NEG-MSG",${JSON.stringify(subId)},"${hex}"]`;
export const negErrFrame = (subId: string, r: Reject): string =>
  `["NEG-ERR",${JSON.stringify(subId)},${JSON.stringify(reasonText(r))}]`;
