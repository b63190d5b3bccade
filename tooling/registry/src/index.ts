export {
  type RegistryAuth,
  type RegistryKind,
  type RunningRegistry,
  type StartRegistryOptions,
  startRegistry,
} from "./registry.ts";
export { startTokenServer, type TokenServer, type TokenServerOptions } from "./token-server.ts";
