// The bin's first step in the bundle: the launcher body every nodekit CLI shares (the
// engine check, the compile cache), standalone in dist/launch.js so that it runs before
// anything else loads.
export { launch } from "@nodekit/cli-kit";
