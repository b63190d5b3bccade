// The full YAML reader (js-yaml), loaded by store.ts only for a file the plain decoder
// declines: a module of its own so that the bundle's chunk for it holds the reader alone.
export { readYamlDocuments } from "@nodekit/documents";
