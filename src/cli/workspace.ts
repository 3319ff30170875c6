import type { Command } from "./command.js";
import { admin, databaseOptions, withDatabase } from "./database.js";
import { writeLine } from "./io.js";
import { printTable, timestamp } from "./table.js";

const create: Command = {
  name: "workspace create",
  usage: "[--name NAME] [options]",
  summary: "Creates a workspace and prints its id.",
  options: {
    name: { type: "string", value: "NAME", help: "its name (default: workspace)" },
    ...databaseOptions,
  },
  run: (parsed, io) =>
    withDatabase(parsed, io, async ({ deps }) => {
      const name = parsed.values.name as string | undefined;
      const { createWorkspace } = await admin();
      writeLine(io.stdout, await createWorkspace(deps, name ?? "workspace"));
    }),
};

const list: Command = {
  name: "workspace list",
  usage: "[options]",
  summary: "Lists the workspaces: id, name, created, and which is the default.",
  options: databaseOptions,
  run: (parsed, io) =>
    withDatabase(parsed, io, async ({ deps }) => {
      printTable(
        io.stdout,
        ["id", "name", "created", "default"],
        (await (await admin()).listWorkspaces(deps)).map((w) => [
          w.id,
          w.name,
          timestamp(w.createdAt),
          w.isDefault ? "default" : "",
        ]),
      );
    }),
};

export const workspaceCommands = [create, list];
