import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { labelKeyFault, labelValueFault, matchesSelector, parseSelector } from "./labels.ts";
import { CreateNodePoolRequestSchema, NodePoolPatchSchema } from "./schemas.ts";
import { parseRequest } from "./validate.ts";

describe("label keys and values, by Kubernetes' rules", () => {
  test.each([
    "app",
    "app.kubernetes.io/name",
    "node-role.kubernetes.io/control-plane",
    "A_b.c-1",
    "x",
    `example.com/${"a".repeat(63)}`,
  ])("%s is a valid key", (key) => {
    expect(labelKeyFault(key)).toBeUndefined();
  });

  test.each([
    [
      "Bad Key!",
      "has a name that must consist of letters, digits, '-', '_' or '.', and start and end with a letter or digit (e.g. 'MyName', 'my.name' or '123-abc')",
    ],
    ["", "has an empty name"],
    ["-app", expect.stringMatching(/^has a name that must consist/)],
    ["a/b/c", expect.stringMatching(/^may hold one '\/' at most/)],
    ["/x", "has an empty prefix before '/'"],
    ["Example.com/x", expect.stringMatching(/^has a prefix that is not a DNS subdomain/)],
    ["a".repeat(64), "has a name longer than 63 characters"],
    [`${"a".repeat(254)}/x`, "has a prefix longer than 253 characters"],
  ])("%j is refused: %s", (key, fault) => {
    expect(labelKeyFault(key)).toEqual(fault);
  });

  test("values: empty, or at most 63 letters, digits, '-', '_', '.', starting and ending alphanumeric", () => {
    for (const value of ["", "prod", "v1.31.4", "a_b-c"]) expect(labelValueFault(value)).toBeUndefined();
    expect(labelValueFault("a".repeat(64))).toBe("must be at most 63 characters long");
    expect(labelValueFault("has space")).toMatch(/^must be empty, or it must consist/);
    expect(labelValueFault("-x")).toMatch(/^must be empty, or it must consist/);
  });

  test("a request with a bad label key, label value or taint is refused at each field", () => {
    const { problems } = parseRequest(
      CreateNodePoolRequestSchema,
      {
        name: "w",
        nodeNamePrefix: "w",
        desiredNodeCount: 1,
        clusterID: "00000000-0000-4000-8000-000000000001",
        nico: { instanceType: "x" },
        labels: { "Bad Key!": "x", good: "not ok!" },
        taints: [{ key: "a/b/c", value: "-", effect: "NoSchedule" }],
      },
      { source: "pool.yaml" },
    );
    expect(problems.map((problem) => [problem.path?.join("."), problem.message])).toEqual([
      ["labels.good", expect.stringMatching(/^must be empty, or it must consist/)],
      [
        "labels",
        expect.stringMatching(/^has a key "Bad Key!" that is not a valid label key: it has a name that must consist/),
      ],
      ["taints.0.key", expect.stringMatching(/^is not a valid key: it may hold one '\/' at most/)],
      ["taints.0.value", expect.stringMatching(/^must be empty, or it must consist/)],
    ]);
  });

  test("a patch may remove a label (null) but not add a bad one", () => {
    expect(parseRequest(NodePoolPatchSchema, { labels: { team: null } }, { source: "p" }).problems).toEqual([]);
    const { problems } = parseRequest(NodePoolPatchSchema, { labels: { "Bad Key!": "x" } }, { source: "p" });
    expect(problems.map((problem) => problem.path)).toEqual([["labels"]]);
  });
});

describe("label selectors (kubectl -l)", () => {
  const labels = { env: "prod", tier: "web", gpu: "" };
  const select = (text: string) => {
    const parsed = parseSelector(text);
    if (parsed.problem !== undefined) throw new Error(parsed.problem);
    return matchesSelector(labels, parsed.requirements);
  };

  test.each([
    ["", true],
    ["env=prod", true],
    ["env==prod", true],
    ["env=dev", false],
    ["env!=dev", true],
    ["missing!=x", true],
    ["gpu", true],
    ["!gpu", false],
    ["!missing", true],
    ["env in (dev, prod)", true],
    ["env notin (prod)", false],
    ["missing notin (x)", true],
    ["env=prod,tier=web", true],
    ["env=prod, tier=db", false],
    ["tier in (web,api),!legacy", true],
  ])("%j selects %s", (text, expected) => {
    expect(select(text)).toBe(expected);
  });

  test.each([
    ["env=prod,,tier=web", "has an empty requirement (two commas in a row, or one at an end)"],
    ["Bad Key!=x", expect.stringMatching(/^has a key "Bad Key" that has a name that must consist/)],
    ["env=not ok", expect.stringMatching(/^has a value "not ok" for env that must be empty, or/)],
  ])("%j is refused: %s", (text, problem) => {
    expect(parseSelector(text)).toEqual({ problem });
  });

  test("key=value selects exactly the objects whose label has that value", () => {
    const token = fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/);
    fc.assert(
      fc.property(fc.dictionary(token, token, { maxKeys: 4 }), token, token, (objectLabels, key, value) => {
        const requirements = (text: string) => {
          const parsed = parseSelector(text);
          if (parsed.problem !== undefined) throw new Error(parsed.problem);
          return parsed.requirements;
        };
        expect(matchesSelector(objectLabels, requirements(`${key}=${value}`))).toBe(objectLabels[key] === value);
        expect(matchesSelector(objectLabels, requirements(`${key}!=${value}`))).toBe(objectLabels[key] !== value);
      }),
    );
  });
});
