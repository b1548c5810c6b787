// Kind classes from NIP-01. One place decides what is replaceable, addressable or ephemeral.

export const isReplaceable = (k: number): boolean => k === 0 || k === 3 || (k >= 10000 && k < 20000);
export const isEphemeral = (k: number): boolean => k >= 20000 && k < 30000;
export const isAddressable = (k: number): boolean => k >= 30000 && k < 40000;
