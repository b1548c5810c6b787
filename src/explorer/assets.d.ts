// Text imports (`with { type: "text" }`) of the explorer's files, embedded by `bun build --compile`.
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "*/bundle.js" {
  const text: string;
  export default text;
}
