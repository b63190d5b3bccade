// An unknown command: the closest commands, on any stderr, and exit 127 (cli-kit's hook).
export { commandNotFound as default } from "@nodekit/cli-kit";
