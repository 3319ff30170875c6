import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomString } from "../../src/domain/random.js";
import { currentEngine } from "../harness/engine.js";
import { waitingOnLocks } from "../harness/locks.js";
import { startServer, type TestServer } from "../harness/server.js";

// Creating a permission needs rbac.*.create_permission wherever a request would create one.
// A role procedure decides that before its transaction, from the permissions that exist; one
// deleted after that check and before the write must not be created without the grant. The
// interleaving is made exact by holding a lock the transaction waits for, on PostgreSQL
// (PGlite runs one connection, so no second transaction can hold a lock meanwhile).

/** Polls `check` until it is true; fails after a generous deadline. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Runs `text` in a transaction of a connection of its own; the returned function rolls it back. */
async function holding(url: string, text: string, params: unknown[]): Promise<() => Promise<void>> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const conn = await sql.reserve();
  await conn.unsafe("begin");
  await conn.unsafe(text, params as postgres.ParameterOrJSON<never>[]);
  return async () => {
    await conn.unsafe("rollback");
    conn.release();
    await sql.end();
  };
}

const MISSING = "Missing permission: 'rbac.*.create_permission'.";

describe.skipIf(currentEngine() !== "postgres")("a permission deleted after the check", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s?.stop());

  /** Deletes the permission while the call waits on the held lock, then lets the call go on. */
  async function deleteWhileWaiting(release: () => Promise<void>, like: string, slug: string) {
    try {
      await until(async () => (await waitingOnLocks(s, like)) === 1, "the call to wait");
      const deleted = await s.call("json", "permissions.deletePermission", { permission: slug });
      expect(deleted.status).toBe(200);
    } finally {
      await release();
    }
  }

  async function permissionExists(slug: string): Promise<boolean> {
    const res = await s.call("json", "permissions.getPermission", { permission: slug });
    return res.status === 200;
  }

  it("is not created by createRole without rbac.*.create_permission: 403, no role", async () => {
    const slug = `race.create.${randomString(8).toLowerCase()}`;
    const name = `race_${randomString(8)}`;
    await s.seed.permission(slug);
    const narrow = await s.seed.rootKey(["rbac.*.create_role", "rbac.*.add_permission_to_role"]);
    // A role of the same name, not committed: the call's insert waits for it after its check.
    const release = await holding(
      s.databaseUrl as string,
      "insert into roles (id, workspace_id, name, created_at) values ($1, $2, $3, 0)",
      [`role_hold_${randomString(8)}`, s.workspaceId, name],
    );
    const pending = s.call("json", "permissions.createRole", { name, permissions: [slug] }, narrow);
    await deleteWhileWaiting(release, "insert into roles%", slug);
    const res = await pending;
    expect(res.status).toBe(403);
    expect(res.error?.detail).toBe(MISSING);
    expect(await permissionExists(slug)).toBe(false);
    expect((await s.call("json", "permissions.getRole", { role: name })).status).toBe(404);
  });

  it("is not created by setRolePermissions without rbac.*.create_permission: 403, role unchanged", async () => {
    const slug = `race.set.${randomString(8).toLowerCase()}`;
    const kept = `race.kept.${randomString(8).toLowerCase()}`;
    await s.seed.permission(slug);
    const made = await s.call("json", "permissions.createRole", {
      name: `race_${randomString(8)}`,
      permissions: [kept],
    });
    expect(made.status).toBe(200);
    const roleId = made.data.roleId as string;
    const narrow = await s.seed.rootKey([
      "rbac.*.add_permission_to_role",
      "rbac.*.remove_permission_from_role",
    ]);
    // The role's row, locked: the call's transaction waits for it after its check.
    const release = await holding(
      s.databaseUrl as string,
      "select id from roles where id = $1 for no key update",
      [roleId],
    );
    const pending = s.call(
      "json",
      "permissions.setRolePermissions",
      { roleId, permissions: [slug] },
      narrow,
    );
    await deleteWhileWaiting(release, "%from roles%for no key update%", slug);
    const res = await pending;
    expect(res.status).toBe(403);
    expect(res.error?.detail).toBe(MISSING);
    expect(await permissionExists(slug)).toBe(false);
    const role = await s.call("json", "permissions.getRole", { role: roleId });
    expect((role.data.permissions ?? []).map((p: { slug: string }) => p.slug)).toEqual([kept]);
  });
});
