import { BaseCommand, type Hints } from "@nodekit/cli-kit";
import type { Command } from "@oclif/core/command";
import { NR_HINTS } from "./hints.ts";

/** nr's commands: the kit's global flags, logger, printer and error rendering, with nr's hints. */
export abstract class NrCommand<T extends typeof Command> extends BaseCommand<T> {
  protected override hints(): Hints {
    return NR_HINTS;
  }
}
