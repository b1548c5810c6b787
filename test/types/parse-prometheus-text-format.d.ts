// The package ships no types; this is the shape its README documents.
declare module "parse-prometheus-text-format" {
  interface Family {
    name: string;
    help: string;
    type: "COUNTER" | "GAUGE" | "SUMMARY" | "HISTOGRAM" | "UNTYPED";
    metrics: { value?: string; labels?: Record<string, string> }[];
  }
  export default function parse(text: string): Family[];
}
