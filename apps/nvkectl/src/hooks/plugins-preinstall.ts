import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { createLogger, describeFailure, flushStdio } from "@nodekit/cli-kit";
import { UserError } from "@nodekit/errors";
import { errorCodes } from "../errors.ts";

/** What @oclif/plugin-plugins made of the argument: a registry package, or a repository URL it would clone. */
type RequestedPlugin = { type: "npm"; name: string; tag: string } | { type: "repo"; url: string };

interface HookContext {
  config: { bin: string; version: string };
}

const looksLikePath = (input: string) =>
  input.startsWith("/") || input.startsWith("./") || input.startsWith("../") || input.startsWith("~") || input === ".";

/**
 * `nvkectl plugins install` takes a package name from the npm registry npm is configured
 * with, and nothing else. @oclif/plugin-plugins reads anything with a slash as a GitHub
 * repository (`/nonexistent` became https://github.com//nonexistent) and clones it: that
 * is refused here, before npm runs, with the right command for a local directory
 * (`plugins link`). See docs/plugins.md.
 */
async function refuseRepositories(
  this: HookContext,
  options: { plugin: RequestedPlugin; config?: { bin: string; version: string } },
): Promise<void> {
  const { plugin } = options;
  if (plugin.type === "npm") return;
  const bin = options.config?.bin ?? this.config.bin;
  const input = plugin.url.replace(/^https:\/\/github\.com\//, "");
  const given = plugin.url.startsWith("https://github.com/") ? input : plugin.url;
  let error: UserError;
  if (looksLikePath(given)) {
    const path = resolve(given.replace(/^~(?=\/|$)/, process.env.HOME ?? "~"));
    const isDir = await stat(path).then(
      (info) => info.isDirectory(),
      () => undefined,
    );
    error = new UserError(
      errorCodes.PLUGIN_SOURCE_REFUSED,
      isDir === undefined
        ? `${given} is not a plugin: there is no such directory`
        : `${given} is a local path; plugins install takes a package name`,
      {
        why: `${bin} plugins install installs packages from the npm registry only, and never reads a path as a GitHub repository`,
        next:
          isDir === true
            ? `link a plugin you are developing with: ${bin} plugins link ${given}`
            : `install a published plugin by its package name: ${bin} plugins install @scope/name`,
        facts: { plugin: given },
      },
    );
  } else {
    error = new UserError(
      errorCodes.PLUGIN_SOURCE_REFUSED,
      `${given} is a repository; plugins install takes a package name`,
      {
        why: `${bin} plugins install installs packages from the npm registry only; it does not clone git repositories`,
        next: [
          `install the plugin's published package: ${bin} plugins install @scope/name`,
          `or clone it yourself, build it, and link it: ${bin} plugins link DIR`,
        ],
        facts: { plugin: given },
      },
    );
  }
  const failure = describeFailure(error, { bin, version: options.config?.version ?? this.config.version });
  createLogger().error(failure.message, failure.fields, failure.details);
  await flushStdio();
  // Already reported: oclif passes a hook's error on when it carries an exit code, and prints
  // nothing for one marked skipOclifErrorHandling (its ExitError may come from another copy of oclif).
  throw Object.assign(new Error(failure.message), {
    oclif: { exit: failure.exitCode },
    skipOclifErrorHandling: true,
  });
}

export default refuseRepositories;
