// An event as the load tool sends it and reads it back: the wire's JSON object.
export interface WireEvent {
  id: string;
  pubkey: string;
  created_at: number;
  kind: number;
  tags: string[][];
  content: string;
  sig: string;
}
