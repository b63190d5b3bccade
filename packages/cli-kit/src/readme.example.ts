// Generated from packages/cli-kit/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { BaseCommand, listFlags, outputFlag } from "@nodekit/cli-kit";

export default class GetWidgets extends BaseCommand<typeof GetWidgets> {
  static override description = "List widgets.";
  static override flags = { output: outputFlag(), ...listFlags };

  async run(): Promise<void> {
    const widgets = [{ name: "a", size: 3, labels: { team: "x" } }];
    await this.print(this.flags.output, {
      kind: "widget", // -o name prints widget/a
      name: (w) => w.name,
      labels: (w) => w.labels, // --show-labels
      rows: widgets,
      columns: [
        { header: "name", value: (w) => w.name },
        { header: "size", value: (w) => w.size },
      ],
    });
  }
}

export {};
