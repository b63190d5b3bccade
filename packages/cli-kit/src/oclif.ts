// oclif's flag and argument builders, from their own entry points rather than the package
// index: the index also loads help, ux and more (≈12 ms at every start) that a command
// does not need. Commands import these from here.
export * as Args from "@oclif/core/args";
export * as Flags from "@oclif/core/flags";
