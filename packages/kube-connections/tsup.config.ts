import { defineConfig } from "tsup";
import { library } from "../../tooling/tsup/base.ts";

export default defineConfig(library());
