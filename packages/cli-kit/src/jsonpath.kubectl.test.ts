import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { tempDir } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { compileTemplate } from "./jsonpath.ts";

// `-o jsonpath=` held to kubectl's own output over the same JSON (issue 26 §1 item 7): real
// kubectl evaluates each template offline (`kubectl annotate --local -f FILE … -o
// jsonpath=…`: no API server, no kubeconfig), and the JSON it evaluated is what
// `… -o json` prints; our engine renders the same template over that JSON. kubectl is
// the machine's, as in the integration tier.

const run = promisify(execFile);
const DOCUMENT = {
  apiVersion: "example.test/v1",
  kind: "Widget",
  metadata: {
    name: "capd-demo",
    labels: { zeta: "1", "app.kubernetes.io/name": "nvke", alpha: "a", "example.com/tier": "api" },
    annotations: { "nvke.io/note": "x<y & y>z" },
  },
  spec: {
    replicas: 3,
    ratio: 1.5,
    big: 1234567.5,
    small: 0.00001,
    huge: 12345678901234567000,
    negative: -2,
    enabled: true,
    off: false,
    nothing: null,
    text: "<a&b>",
    unicode: "héllo ☃",
    pools: [
      { name: "control-plane", desired: 1, labels: { "node-role.kubernetes.io/control-plane": "" } },
      { name: "workers", desired: 2, labels: { b: "2", a: "1" } },
    ],
    empty: [],
    map: {},
    nested: { y: { b: 1, a: 2 }, x: [1, "two", null, { k: "v" }] },
    "dotted.key": "d",
  },
};

const TEMPLATES = [
  "{.metadata.name}",
  "{.metadata.labels.app\\.kubernetes\\.io/name}",
  "{.metadata.labels.example\\.com/tier}",
  "{.metadata.labels}",
  "{.metadata.annotations}",
  "{.metadata.annotations.nvke\\.io/note}",
  "{.spec.replicas} {.spec.ratio} {.spec.big} {.spec.small} {.spec.huge} {.spec.negative}",
  "{.spec.enabled}/{.spec.off}/{.spec.nothing}",
  "{.spec.text}|{.spec.unicode}",
  "{.spec.pools[*].name}",
  "{.spec.pools[0]}",
  "{.spec.pools[-1].name}",
  "{.spec.pools[0].labels.node-role\\.kubernetes\\.io/control-plane}",
  "{.spec.pools[1].labels}",
  "{.spec.empty}|{.spec.map}",
  "{.spec.nested}",
  "{.spec.nested.x[*]}",
  "{.spec.dotted\\.key}",
  "{.spec.missing}|{.nope.deeper}",
  '{range .spec.pools[*]}{.name}{"\\t"}{.desired}{"\\n"}{end}',
  '{range .spec.pools[*]}{.name}={.labels}{";"}{end}',
  "{.spec.pools[?(@.desired>1)].name}",
  '{.spec.pools[?(@.name=="workers")].desired}',
  "{..desired}",
  "{['metadata']['name']}",
  "{.spec['dotted.key']}",
  "kind is {.kind}, {.apiVersion}",
];

let dir: string;
let cleanup: () => Promise<void>;
let evaluated: unknown;
const kubectl = async (template: string) =>
  (
    await run("kubectl", ["annotate", "--local", "-f", join(dir, "widget.json"), "nodekit=1", "-o", template], {
      env: { PATH: process.env.PATH ?? "", HOME: dir, KUBECONFIG: "/dev/null" },
    })
  ).stdout;

beforeAll(async () => {
  ({ path: dir, cleanup } = await tempDir("jsonpath-kubectl-"));
  await writeFile(join(dir, "widget.json"), JSON.stringify(DOCUMENT));
  evaluated = JSON.parse(await kubectl("json"));
});
afterAll(() => cleanup?.());

describe("-o jsonpath= prints what kubectl prints over the same JSON", () => {
  test.each(TEMPLATES)("%s", async (template) => {
    const printed = await kubectl(`jsonpath=${template}`);
    expect(compileTemplate(template).render(evaluated)).toBe(printed);
    // The document as written (keys unsorted, as our controller sends them) prints the same:
    // kubectl sorts a map's keys whatever their order.
    const asWritten = {
      ...DOCUMENT,
      metadata: { ...DOCUMENT.metadata, annotations: { ...DOCUMENT.metadata.annotations, nodekit: "1" } },
    };
    expect(compileTemplate(template).render(asWritten)).toBe(printed);
  });
});
