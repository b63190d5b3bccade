import fc from "fast-check";
import { expect, test } from "vitest";
import { loadDeployPath } from "./index.ts";
import { memoryFs } from "./test-support.ts";

// The deploy path read from an in-memory file system (the injected DeployPathFs): for any
// list of items and dependencies, exactly the dependencies that do not name an earlier item
// are problems, each at its own field, and a path without such a problem loads in order.

const itemList = fc
  .uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/), { minLength: 1, maxLength: 8 })
  .chain((names) =>
    fc.tuple(
      fc.constant(names),
      fc.array(fc.array(fc.constantFrom(...names, "elsewhere"), { maxLength: 3 }), {
        minLength: names.length,
        maxLength: names.length,
      }),
    ),
  );

test("every dependency that is not on an earlier item is reported at its field; the rest load in order", async () => {
  await fc.assert(
    fc.asyncProperty(itemList, async ([names, dependencies]) => {
      const files: Record<string, string> = {
        "/p/nvke-deploy.yaml": `apiVersion: deploy.nodekit.dev/v1alpha1\nkind: DeployPath\nmetadata:\n  name: p\nspec:\n  items:\n${names
          .map((name, index) => `    - name: ${name}\n      dependsOn: ${JSON.stringify(dependencies[index] ?? [])}`)
          .join("\n")}\n`,
      };
      for (const name of names)
        files[`/p/${name}/cm.yaml`] = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;
      const loaded = await loadDeployPath("/p", { fs: memoryFs(files) });
      const expected = names.flatMap((_, index) =>
        (dependencies[index] ?? []).flatMap((dependency, position) =>
          names.indexOf(dependency) >= 0 && names.indexOf(dependency) < index
            ? []
            : [`spec.items.${index}.dependsOn.${position}`],
        ),
      );
      expect(loaded.problems.map((problem) => problem.path?.join("."))).toEqual(expected);
      for (const problem of loaded.problems) {
        expect(problem.source).toBe("/p/nvke-deploy.yaml");
        expect(problem.line).toBeGreaterThan(6);
      }
      if (expected.length === 0) expect(loaded.deployPath?.items.map((item) => item.name)).toEqual(names);
    }),
    { numRuns: 150 },
  );
});
