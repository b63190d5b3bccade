import { cpSync, mkdirSync, rmSync } from "node:fs";
import { defineConfig } from "tsup";
import { library } from "../../tooling/tsup/base.ts";

// The emulators and the test control plane are private workspace packages (tooling/): their
// code and types are bundled in; their third-party dependencies are this package's. The Go
// module pins and the scripts that build kube-apiserver and etcd (tooling/k8s-testbin) ship
// beside dist/, never the binaries (see README.md, "The binaries").
const PRIVATE = /^@nodekit\/(testenv|nvke-emulator|noderings-emulator|emulator-kit)(\/|$)/;
const TESTBIN = new URL("../../tooling/k8s-testbin/", import.meta.url);
const SHIPPED = new URL("./k8s-testbin/", import.meta.url);

export default defineConfig(
  library({
    // Their types too: tooling/tsup/declarations.ts takes a private package's declarations into a library's.
    noExternal: [PRIVATE],
    async onSuccess() {
      rmSync(SHIPPED, { recursive: true, force: true });
      mkdirSync(SHIPPED);
      for (const file of ["ensure.sh", "go-testbin.sh"]) cpSync(new URL(file, TESTBIN), new URL(file, SHIPPED));
      for (const module of ["kube-apiserver", "etcd", "helm", "clusterctl"]) {
        mkdirSync(new URL(`${module}/`, SHIPPED));
        for (const file of ["go.mod", "go.sum"]) {
          cpSync(new URL(`${module}/${file}`, TESTBIN), new URL(`${module}/${file}`, SHIPPED));
        }
      }
    },
  }),
);
