import { describe, expect, test } from "vitest";
import { suggestFlags, usageError } from "./usage-errors.ts";

// Issue 26 §1 item 7: oclif's "Missing 1 required arg:" and "Nonexistent flag: --dryrun" said
// the way kubectl and git say them: the argument named with an example, the flag meant.

const shape = {
  bin: "nvkectl",
  id: "delete:cluster",
  flags: { "dry-run": {}, wait: {}, timeout: {}, "stack-config": {}, secret: { hidden: true } },
  args: { name: { description: "The cluster's name; several delete several." } },
  examples: ["<%= config.bin %> <%= command.id %> --help", "<%= config.bin %> <%= command.id %> tenant-a --wait"],
};

describe("usage errors", () => {
  test("a missing argument is named, with what it is and an example of the command", () => {
    const error = usageError(
      {
        message: "Missing 1 required arg:\nname  The cluster's name",
        args: [{ name: "name", description: "The cluster's name; several delete several." }],
      },
      shape,
    );
    expect(error?.message).toBe("nvkectl delete cluster needs NAME, the cluster's name; several delete several");
    expect(error?.exitCode).toBe(2);
    expect(error?.next).toEqual([
      "for example: nvkectl delete cluster tenant-a --wait",
      "nvkectl delete cluster --help shows every argument and flag",
    ]);
  });

  test("a mistyped flag gets the closest one the command has; a far one gets none; hidden flags are never offered", () => {
    expect(usageError({ message: "Nonexistent flag: --dryrun", flags: ["--dryrun"] }, shape)?.message).toBe(
      "nvkectl delete cluster has no flag --dryrun; did you mean --dry-run?",
    );
    expect(usageError({ message: "Nonexistent flag: --stack-confg", flags: ["--stack-confg"] }, shape)?.message).toBe(
      "nvkectl delete cluster has no flag --stack-confg; did you mean --stack-config?",
    );
    expect(usageError({ message: "Nonexistent flag: --kubeconfig", flags: ["--kubeconfig"] }, shape)?.message).toBe(
      "nvkectl delete cluster has no flag --kubeconfig",
    );
    expect(usageError({ message: "Nonexistent flag: --secrt", flags: ["--secrt"] }, shape)?.message).toBe(
      "nvkectl delete cluster has no flag --secrt",
    );
    expect(suggestFlags("--tim", ["timeout", "wait"])).toEqual(["--timeout"]);
  });

  test("anything else is not a usage error of these kinds", () => {
    expect(usageError(new Error("boom"), shape)).toBeUndefined();
    expect(usageError({ message: "Missing 1 required arg" }, shape)).toBeUndefined();
  });
});
