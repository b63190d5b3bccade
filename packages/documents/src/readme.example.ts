// Generated from packages/documents/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { parseYamlWith } from "@nodekit/documents";
import { formatProblem } from "@nodekit/errors";
import * as z from "zod";

const Pins = z.strictObject({ kubernetes: z.string().startsWith("v"), replicas: z.int().min(1).default(3) });
const text = "kubernetes: 1.31\nreplicas: 0\ntoken: s3cret\n";

const { value, problems } = parseYamlWith(Pins, text, { source: "pins.yaml" });
for (const problem of problems) console.error(formatProblem(problem));
if (value !== undefined) console.log(value.kubernetes, value.replicas);

export {};
