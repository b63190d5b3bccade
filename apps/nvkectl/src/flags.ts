import { Flags, listFlags, outputFlag } from "@nodekit/cli-kit";

/** `-f FILE`: the request document, YAML or JSON. */
export const fileFlag = (what: string) =>
  Flags.string({
    char: "f",
    description: `The ${what}: a YAML or JSON file holding exactly one document, or - to read it from stdin.`,
    required: true,
  });

/** `-o json|yaml|name` on create, scale and patch: print the object the controller returned instead of a line. */
export const objectOutputFlag = Flags.option({
  char: "o",
  description:
    "Print the object the controller returned, as json or yaml, or as kind/name (name), instead of a one-line summary.",
  options: ["json", "yaml", "name"] as const,
})();

/** `--cluster NAME`: pool names are unique within a cluster only, so this decides which pool. */
export const clusterFlag = Flags.string({
  description: "The cluster the node pool belongs to (pool names are unique within a cluster only).",
  required: true,
});

/** `-l, --selector`: kubectl's label selector. */
export const selectorFlag = Flags.string({
  char: "l",
  description:
    "Only the objects whose labels match this selector, as kubectl takes it: key=value, key!=value, key, !key, key in (a,b), key notin (a,b), joined by commas.",
  helpValue: "SELECTOR",
});

/** `-A, --all-sites`: every configured site at once, as kubectl's `-A, --all-namespaces`. */
export const allSitesFlag = (exclusive: string[] = []) =>
  Flags.boolean({
    char: "A",
    description:
      "List from every configured site at once, with a SITE column (site in -o json); --site does not apply. A site that does not answer is named on stderr with its error while the others print, and the exit code is 6.",
    ...(exclusive.length === 0 ? {} : { exclusive }),
  });

/** How often --watch and --wait ask the controller (hidden: tests shorten it). */
const pollIntervalFlag = Flags.string({
  description: "How often to ask the controller while watching or waiting.",
  default: "2s",
  hidden: true,
});

/** What --wait and --watch wait for when --timeout is not given. */
export const DEFAULT_TIMEOUT = "10m";

const timeoutFlag = Flags.string({
  description:
    "How long --wait (or --watch of one object) waits before giving up with exit code 6, e.g. 90s, 10m, 1h; 10m when not given. A --watch of a list runs until interrupted, or for this long.",
});

/** `--wait` (saying what it waits for), with its --timeout and --poll-interval. */
export const waitFlags = (waitsFor: string) => ({
  wait: Flags.boolean({ description: waitsFor }),
  timeout: timeoutFlag,
  "poll-interval": pollIntervalFlag,
});

/**
 * What get clusters and get nodepools take: -o and the list flags, --selector, --watch or --wait
 * (saying what they print: the `one` object named, `all` of them, the `named` ones) with
 * --timeout and --poll-interval, and --all-sites (with neither of those).
 */
export const getWatchFlags = (words: { one: string; all: string; named: string }) => ({
  output: outputFlag(),
  selector: selectorFlag,
  ...listFlags,
  watch: Flags.boolean({
    char: "w",
    description: `With NAME: print the ${words.one} each time it changes, until it is Ready. Without: print ${words.all}, then each ${words.one} that changes, until interrupted.`,
    exclusive: ["wait"],
  }),
  wait: Flags.boolean({
    description: `Wait silently until the named ${words.named} are Ready, then show them.`,
    exclusive: ["watch"],
  }),
  timeout: timeoutFlag,
  "poll-interval": pollIntervalFlag,
  "all-sites": allSitesFlag(["watch", "wait"]),
});

export const ignoreNotFoundFlag = Flags.boolean({
  description: "Treat a name that does not exist as deleted already: no error, exit 0 when nothing else failed.",
});

export const patchFlags = {
  patch: Flags.string({
    char: "p",
    description:
      'The JSON merge patch as text, JSON or YAML (as kubectl patch -p takes it), such as \'{"labels": {"team": "a"}}\' or \'labels: {team: a}\'.',
    exactlyOne: ["patch", "patch-file"],
  }),
  "patch-file": Flags.string({
    description: "A file holding the JSON merge patch, as JSON or YAML (one document), or - to read it from stdin.",
    exactlyOne: ["patch", "patch-file"],
  }),
};

/** How the release commands and `install --release` reach the registry; credentials never come from flags. */
export const registryFlags = {
  "plain-http": Flags.boolean({
    description: "Talk plain HTTP to the registry (a lab or loopback registry without TLS).",
  }),
  "ca-file": Flags.string({
    description: "A PEM file of CA certificates to trust for the registry's TLS certificate.",
  }),
  "allow-token-realm": Flags.string({
    description:
      "A host (auth.example.com, or host:port) the registry may send token requests to although it is not the registry's own host (Docker Hub's auth.docker.io): the registry's credentials go there. Repeat for more; a warning says when one is used.",
    multiple: true,
  }),
};

/** The registry flags as the services take them, with where a warning goes. */
export function registryAccess(
  flags: {
    "plain-http"?: boolean | undefined;
    "ca-file"?: string | undefined;
    "allow-token-realm"?: string[] | undefined;
  },
  warn: (message: string) => void,
) {
  return {
    plainHttp: flags["plain-http"],
    caFile: flags["ca-file"],
    allowTokenRealms: flags["allow-token-realm"],
    warn,
  };
}
