export { formatConfig, type ParseOptions, type ParseResult, parseConfig, validateConfig } from "./parse.ts";
export * from "./store-entry.ts";
