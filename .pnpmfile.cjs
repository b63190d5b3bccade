// pnpm's hooks for this workspace (read by pnpm itself; see CONTRIBUTING.md "Releases").
//
// beforePacking: what `pnpm pack` and `pnpm publish` (so `changeset publish` and `pnpm release`)
// put in a package's published package.json. The "source" export condition points at src/*.ts,
// which the workspace's tests and bundles resolve and which no package ships (`files` is dist/):
// it is left out, so that no published export names a file the tarball lacks.
function withoutSource(exportsField) {
  if (exportsField === null || typeof exportsField !== "object" || Array.isArray(exportsField)) return exportsField;
  const out = {};
  for (const [key, value] of Object.entries(exportsField)) {
    if (key === "source") continue;
    out[key] = withoutSource(value);
  }
  return out;
}

module.exports = {
  hooks: {
    beforePacking(pkg) {
      if (pkg.exports !== undefined) pkg.exports = withoutSource(pkg.exports);
      return pkg;
    },
  },
};
