import { mkdtemp, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { publicPackages } from "./src/workspace.ts";
import { packPackages } from "./src/pack.ts";
import { thirdPartyClosure, mirrorTarballs } from "./src/mirror.ts";
import { startLocalRegistry } from "./src/registry.ts";
import { publishTarballs } from "./src/publish.ts";
const root = "/work/h-install";
const work = await mkdtemp("/tmp/hi-work-");
let t = Date.now();
const pubs = await publicPackages(root);
const packed = await packPackages(pubs, join(work, "tarballs"));
console.log("packed", packed.length, Date.now() - t);
t = Date.now();
const mirrored = await mirrorTarballs(await thirdPartyClosure(pubs), "/root/.cache/nodekit/packaging/mirror");
console.log("mirrored", Date.now() - t);
t = Date.now();
const regDir = join(work, "reg");
await mkdir(regDir);
const reg = await startLocalRegistry(regDir, mirrored);
console.log("registry", reg.url, Date.now() - t);
t = Date.now();
const home = join(work, "home");
await mkdir(home);
await publishTarballs(packed, {
  registry: reg.url,
  env: {
    HOME: home,
    PATH: process.env.PATH,
    npm_config_userconfig: reg.npmrc,
    npm_config_cache: join(work, "npm-cache"),
  },
});
console.log("published", Date.now() - t);
console.log(JSON.stringify({ work, url: reg.url, npmrc: reg.npmrc }));
await new Promise((r) => setTimeout(r, 1e9));
