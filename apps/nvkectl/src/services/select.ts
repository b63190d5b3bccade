import { errorCodes as coreErrorCodes, UserError } from "@nodekit/errors";
import { matchesSelector, parseSelector, type Requirement } from "@nodekit/nvke-api";

/** `-l SELECTOR` → its requirements; a selector that does not parse is a usage error (exit 2). */
export function selectorOf(text: string | undefined): Requirement[] | undefined {
  if (text === undefined) return undefined;
  const parsed = parseSelector(text);
  if (parsed.problem === undefined) return parsed.requirements;
  throw new UserError(coreErrorCodes.USAGE, `--selector ${JSON.stringify(text)} ${parsed.problem}`, {
    next: "write it as kubectl takes it: -l env=prod,tier!=db or -l 'zone in (a,b)'",
  });
}

/** The items whose labels the selector matches (all of them without one). */
export function selected<T extends { labels: Record<string, string> }>(
  items: readonly T[],
  selector: readonly Requirement[] | undefined,
): T[] {
  return selector === undefined ? [...items] : items.filter((item) => matchesSelector(item.labels, selector));
}

/** Names and a selector choose objects two ways; kubectl refuses both at once, and so does this. */
export function checkNamesOrSelector(names: readonly string[], selector: string | undefined, kind: string): void {
  if (names.length > 0 && selector !== undefined) {
    throw new UserError(coreErrorCodes.USAGE, `give ${kind} names or a --selector, not both`, {
      next: `drop the names to select by label, or drop --selector to get the ${kind}s named`,
    });
  }
}

/** `"a", "b" and "c"` */
export function quotedList(names: readonly string[]): string {
  const quoted = names.map((name) => JSON.stringify(name));
  return quoted.length <= 1 ? (quoted[0] ?? "") : `${quoted.slice(0, -1).join(", ")} and ${quoted.at(-1)}`;
}
