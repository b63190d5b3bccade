// Importing this module does not load @kubernetes/client-node: `connect` imports it when it is called.
// The surface without the version probes is also @nodekit/kube/access (see src/access.ts).
export * from "./access.ts";
export { atLeast, KUBE_TOOLS, probeTool, requireTool, type ToolProbe, type ToolSpec, toolProblem } from "./versions.ts";
