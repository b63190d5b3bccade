export * from "./client-entry.ts";
export { applyMergePatch, isPlainObject } from "./merge-patch.ts";
export { API_VERSION, buildOpenApiDocument } from "./openapi.ts";
export * from "./schemas.ts";
export { type ParsedRequest, type ParseRequestOptions, parseRequest, problemsToDetails } from "./validate.ts";
