import { describe, expect, test } from "vitest";
import {
  type CompletableCommand,
  type CompletionLookups,
  completionCandidates,
  completionScript,
} from "./completion.ts";

const output = { type: "option", char: "o", helpValue: "table|wide|json|yaml|name|jsonpath=TEMPLATE" } as const;
const site = { type: "option" } as const;
const COMMANDS: CompletableCommand[] = [
  {
    id: "get:clusters",
    aliases: ["get:cluster"],
    takesArgs: true,
    flags: { output, site, watch: { type: "boolean", char: "w" } },
  },
  {
    id: "get:nodepools",
    aliases: ["get:nodepool"],
    takesArgs: true,
    flags: { output, site, cluster: { type: "option" } },
  },
  {
    id: "get:providers",
    takesArgs: false,
    flags: { output: { type: "option", char: "o", options: ["table", "json"] }, site },
  },
  { id: "delete:cluster", takesArgs: true, flags: { site, wait: { type: "boolean" } } },
  { id: "config:use-site", takesArgs: true, flags: {} },
  { id: "install", takesArgs: false, flags: { sitespec: { type: "option" }, "dry-run": { type: "boolean" } } },
  { id: "__complete", hidden: true, takesArgs: true, flags: {} },
];

/** The site's names, and which lookups completion made (with which cluster). */
function siteOf(clusters = ["tenant-a", "tenant-b", "lab"]) {
  const asked: string[] = [];
  const lookups: CompletionLookups = {
    sites: async () => {
      asked.push("sites");
      return ["lab", "prod"];
    },
    clusters: async () => {
      asked.push("clusters");
      return clusters;
    },
    nodePools: async (cluster) => {
      asked.push(`nodepools of ${cluster}`);
      return cluster === "tenant-a" ? ["workers", "gpu"] : [];
    },
  };
  return { lookups, asked };
}

const complete = (line: string, lookups = siteOf().lookups) => completionCandidates(line.split(" "), COMMANDS, lookups);

describe("shell completion", () => {
  test("commands word by word; hidden ones never", async () => {
    expect(await complete("")).toEqual(["config", "delete", "get", "install"]);
    expect(await complete("get ")).toEqual(["cluster", "clusters", "nodepool", "nodepools", "providers"]);
    expect(await complete("get clu")).toEqual(["cluster", "clusters"]);
  });

  test("cluster names after get clusters, delete cluster and --cluster; one given is not offered again", async () => {
    const { lookups, asked } = siteOf();
    expect(await complete("get clusters ", lookups)).toEqual(["lab", "tenant-a", "tenant-b"]);
    expect(await complete("get cluster ten", lookups)).toEqual(["tenant-a", "tenant-b"]);
    expect(await complete("delete cluster tenant-a ", lookups)).toEqual(["lab", "tenant-b"]);
    expect(await complete("get nodepools --cluster ", lookups)).toEqual(["lab", "tenant-a", "tenant-b"]);
    expect(asked).toEqual(["clusters", "clusters", "clusters", "clusters"]);
  });

  test("node pools of the cluster --cluster names, before or after the command", async () => {
    const { lookups, asked } = siteOf();
    expect(await complete("get nodepools --cluster tenant-a ", lookups)).toEqual(["gpu", "workers"]);
    expect(await complete("get nodepools --cluster=tenant-a w", lookups)).toEqual(["workers"]);
    // Without --cluster there is no pool to name: nothing is asked.
    expect(await complete("get nodepools ", lookups)).toEqual([]);
    expect(asked).toEqual(["nodepools of tenant-a", "nodepools of tenant-a"]);
  });

  test("sites after --site and config use-site", async () => {
    expect(await complete("get clusters --site ")).toEqual(["lab", "prod"]);
    expect(await complete("config use-site p")).toEqual(["prod"]);
  });

  test("-o values from the flag's own list: -o, --output VALUE, --output=VALUE, and bash's split --output = VALUE", async () => {
    const formats = ["json", "jsonpath=", "name", "table", "wide", "yaml"];
    expect(await complete("get clusters -o ")).toEqual(formats);
    expect(await complete("get clusters --output j")).toEqual(["json", "jsonpath="]);
    expect(await complete("get clusters --output=y")).toEqual(["--output=yaml"]);
    expect(await completionCandidates(["get", "clusters", "--output", "=", "ya"], COMMANDS, siteOf().lookups)).toEqual([
      "--output=yaml",
    ]);
    expect(await complete("get providers -o ")).toEqual(["json", "table"]);
  });

  test("flags of the command; a flag's value is not read as a command word", async () => {
    expect(await complete("get clusters --w")).toEqual(["--watch"]);
    expect(await complete("install --")).toEqual(["--dry-run", "--sitespec"]);
    expect(await complete("get clusters -o json ")).toEqual(["lab", "tenant-a", "tenant-b"]);
    // A flag that takes a file: nothing offered, the shell completes the file itself.
    expect(await complete("install --sitespec ")).toEqual([]);
  });

  test("a site that does not answer offers nothing (the lookups answer [])", async () => {
    expect(await complete("get clusters ", siteOf([]).lookups)).toEqual([]);
  });

  test("the scripts call __complete with the words typed, and fall back to file names", () => {
    expect(completionScript("bash", "nvkectl")).toContain("nvkectl __complete -- ");
    expect(completionScript("bash", "nvkectl")).toContain("complete -F _nvkectl_complete nvkectl");
    expect(completionScript("zsh", "nvkectl")).toContain("compdef _nvkectl_complete nvkectl");
    expect(completionScript("zsh", "nvkectl")).toContain("_files");
  });
});
