export { SandboxError } from "./errors.ts";
export { defaultSandboxDir, type SandboxLayout, sandboxLayout } from "./layout.ts";
export { providerRepository } from "./release.ts";
export {
  type ControllerAuth,
  down,
  environmentLines,
  kubeconfigFor,
  type SandboxInfo,
  type SandboxOptions,
  type SandboxStatus,
  type ServeOptions,
  serve,
  status,
  type TenantRecord,
  type UpOptions,
  up,
} from "./sandbox.ts";
export {
  authObjects,
  capdObjects,
  type Grant,
  grantCommands,
  grantObjects,
  INSTALLED_PROVIDER_GRANTS,
  OPERATOR_GRANTS,
  OPERATOR_USER,
  SANDBOX_AUDIENCE,
  SANDBOX_SITE,
  type Subject,
} from "./site-objects.ts";
