export { errorCodes as stackConfigErrorCodes } from "./errors.ts";
export { type StackConfigKey, stackConfigKeys } from "./keys.ts";
export { type ParsedStackConfig, parseStackConfig, readStackConfig, stackCredentials } from "./parse.ts";
export {
  type ImageChoice,
  PLACEHOLDER_PREFIX,
  STACK_CONFIG_API_VERSION,
  STACK_CONFIG_KIND,
  type StackConfig,
  StackConfigSchema,
} from "./schema.ts";
