export { EmulatorApiError, type Refuse, type ShellRefusal } from "./api-error.ts";
export { cidrsOverlap, podCidrCapacity } from "./cidr.ts";
export {
  ADMIN_TOKEN_REQUIRED,
  answerChaos,
  BODY_LIMIT,
  bearerToken,
  type CommonChaos,
  type ControlRoutes,
  type EmulatorServer,
  type EmulatorServerOptions,
  Exchange,
  mediaType,
  parseJsonBody,
  Router,
  readJson,
  readText,
  serveInfoRoutes,
  startEmulatorServer,
} from "./http.ts";
export { parseStateFile, StateFileError, type StateFileFormat, StateStore } from "./store.ts";
