import { AdminError } from "../admin/errors.js";
import { ALL_PERMISSIONS } from "../domain/root-permissions.js";
import type { RootKeyRow } from "../storage/queries/root-keys.js";
import type { Command } from "./command.js";
import { admin, databaseOptions, withDatabase } from "./database.js";
import { writeLine } from "./io.js";
import { printTable, timestamp } from "./table.js";

/** `--permission P` (repeatable) and `--permissions P,Q`, together, without repeats. */
function permissionsOf(values: Record<string, unknown>): string[] {
  const one = (values.permission as string[] | undefined) ?? [];
  const lists = ((values.permissions as string[] | undefined) ?? []).flatMap((l) => l.split(","));
  return [...new Set([...one, ...lists].map((p) => p.trim()).filter((p) => p !== ""))];
}

const create: Command = {
  name: "root-key create",
  usage: "--workspace ID (--permission P ... | --permissions P,Q | --all) [--name NAME]",
  summary: "Creates a root key; prints its secret once on stdout, and its id on stderr.",
  details:
    "Permissions are resource.id.action (api.*.create_key, api.api_123.read_key); a * segment\n" +
    "matches any one segment. A permission no procedure checks is refused, naming the nearest.",
  options: {
    workspace: { type: "string", value: "ID", help: "the workspace it acts in (required)" },
    permission: { type: "string", multiple: true, value: "P", help: "a permission (repeatable)" },
    permissions: {
      type: "string",
      multiple: true,
      value: "P,Q",
      help: "comma-separated permissions",
    },
    all: { type: "boolean", help: `every permission (${ALL_PERMISSIONS})` },
    name: { type: "string", value: "NAME", help: "a name to tell it by" },
    ...databaseOptions,
  },
  async run(parsed, io) {
    const workspace = parsed.values.workspace as string | undefined;
    if (!workspace) throw new AdminError("--workspace is required");
    const permissions = permissionsOf(parsed.values);
    const all = parsed.values.all === true;
    if (all && permissions.length > 0) {
      throw new AdminError("give --permission/--permissions or --all, not both");
    }
    const granted = all ? [ALL_PERMISSIONS] : permissions;
    const { checkRootKeyPermissions, createRootKey } = await admin();
    checkRootKeyPermissions(granted);
    await withDatabase(parsed, io, async ({ deps }) => {
      const key = await createRootKey(
        deps,
        workspace,
        granted,
        (parsed.values.name as string | undefined) ?? null,
      );
      writeLine(io.stderr, `created root key ${key.id}; the secret below is shown only once`);
      writeLine(io.stdout, key.secret);
    });
  },
};

function state(k: RootKeyRow, now: number): string {
  if (k.revokedAt !== null) return "revoked";
  return k.expiresAt !== null && k.expiresAt <= now ? "expired" : "live";
}

const list: Command = {
  name: "root-key list",
  usage: "[--workspace ID] [options]",
  summary: "Lists root keys: id, name, workspace, created, state and permissions.",
  details:
    "Never a secret or a hash. Root keys do not record their last use; the audit log names\n" +
    "the root key behind every change (analytics.listAuditLogs).",
  options: {
    workspace: { type: "string", value: "ID", help: "only this workspace's keys" },
    ...databaseOptions,
  },
  run: (parsed, io) =>
    withDatabase(parsed, io, async ({ deps }) => {
      const now = deps.clock.now();
      const { listRootKeys } = await admin();
      const keys = await listRootKeys(deps, parsed.values.workspace as string | undefined);
      printTable(
        io.stdout,
        ["id", "name", "workspace", "created", "state", "permissions"],
        keys.map((k) => [
          k.id,
          k.name ?? "",
          k.workspaceId,
          timestamp(k.createdAt),
          state(k, now),
          k.permissions.join(","),
        ]),
      );
    }),
};

const revoke: Command = {
  name: "root-key revoke",
  usage: "ID [options]",
  summary: "Revokes a root key; every server stops accepting it at once.",
  options: databaseOptions,
  positionals: ["ID"],
  async run(parsed, io) {
    const id = parsed.positionals[0];
    if (!id) throw new AdminError("usage: latchkey root-key revoke ID");
    const { revokeRootKey } = await admin();
    await withDatabase(parsed, io, async ({ deps }) => {
      await revokeRootKey(deps, id);
      writeLine(io.stdout, `revoked ${id}`);
    });
  },
};

export const rootKeyCommands = [create, list, revoke];
