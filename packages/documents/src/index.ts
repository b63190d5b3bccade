export { errorCodes as documentsErrorCodes } from "./errors.ts";
export { apiVersionField, checkedString, kindField, strictMapping, typeMessage } from "./fields.ts";
export {
  DEFAULT_MAX_INPUT_BYTES,
  inputTooLarge,
  type ReadInputOptions,
  readInputFile,
  readInputStream,
} from "./input.ts";
export type { FieldPath } from "./locate.ts";
export { readableMessage } from "./messages.ts";
export { DNS_LABEL_MAX_LENGTH, DNS_LABEL_PATTERN, DNS_LABEL_RULE, dnsLabelFault, isDnsLabel } from "./names.ts";
export { type ParseYamlOptions, parseYamlWith } from "./parse-yaml.ts";
export {
  DEFAULT_MAX_ALIAS_NODES,
  DEFAULT_MAX_TEXT_LENGTH,
  type LocatedDocument,
  type ReadYamlOptions,
  type ReadYamlResult,
  readYamlDocuments,
} from "./read.ts";
export { type Decoded, type DecodeOptions, decodeUtf8 } from "./text.ts";
export { type Validated, type ValidateOptions, validateDocument } from "./validate.ts";
