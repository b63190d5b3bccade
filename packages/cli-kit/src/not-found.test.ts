import { describe, expect, test } from "vitest";
import { suggestCommands } from "./not-found.ts";

const commands = [
  { id: "get:clusters", aliases: ["get:cluster"] },
  // oclif lists an alias as a command of its own too
  { id: "get:cluster", aliases: ["get:cluster"] },
  { id: "get:nodepools", aliases: ["get:nodepool"] },
  { id: "get:providers", aliases: ["get:provider"] },
  { id: "get:kubeconfig" },
  { id: "delete:cluster", aliases: ["delete:clusters"] },
  { id: "describe:cluster", aliases: ["describe:clusters"] },
  { id: "config:set-site" },
];

describe("suggestCommands", () => {
  test.each([
    ["get cluser", ["get cluster"]],
    ["get clusterz", ["get clusters"]],
    ["get nodpools", ["get nodepools"]],
    ["delet cluster", ["delete cluster"]],
    ["descibe cluster", ["describe cluster"]],
    ["config set-sit", ["config set-site"]],
    ["get prov", ["get providers"]],
  ])("%s → %j", (typed, expected) => {
    expect(suggestCommands(typed, commands)).toEqual(expected);
  });

  test("an alias and its command count once; nothing far away is suggested", () => {
    expect(suggestCommands("get", commands)).toEqual(["get clusters", "get nodepools", "get providers"]);
    expect(suggestCommands("frobnicate", commands)).toEqual([]);
    expect(suggestCommands("", commands)).toEqual([]);
  });
});
