// The bin's entry in the bundle: it and the commands share one bundled copy of oclif.
export { run } from "@nodekit/cli-kit";
