import type { JsonObject } from "@bufbuild/protobuf";
import { UNLIMITED } from "../../src/domain/credits.js";
import { newId } from "../../src/domain/ids.js";
import { generateKey, keyStart } from "../../src/domain/key-material.js";
import { randomString } from "../../src/domain/random.js";
import type { ProcedureName } from "../../src/services/procedures.js";
import { apiInsert } from "../../src/storage/queries/apis.js";
import { identityInsert } from "../../src/storage/queries/identities.js";
import { permissionInsert, permissionsBySlugs } from "../../src/storage/queries/permissions.js";
import { namespaceInsertIfAbsent } from "../../src/storage/queries/ratelimit-namespaces.js";
import { roleAddPermissions, roleInsert } from "../../src/storage/queries/roles.js";
import { rootKeyInsert } from "../../src/storage/queries/root-keys.js";
import { workspaceInsert } from "../../src/storage/queries/workspaces.js";
import type { TestServer } from "../harness/server.js";
import { KEY_PREFIX, type Placeholders } from "./normalise.js";

/**
 * What a row's setup builds with: a workspace of the row's own (so that lists, audit logs and
 * names never meet another row's), its all-powerful root key, and creators of the objects a
 * call names. Everything created is registered as a placeholder (see normalise.ts).
 */
export interface Given {
  readonly workspaceId: string;
  /** The workspace's all-powerful root key: the call's authentication unless the row says. */
  readonly rootKey: string;
  /** The test clock's time, for bodies that name a time. */
  readonly now: number;
  /** A root key of the workspace holding only these permissions. */
  rootKeyWith(permissions: string[]): Promise<string>;
  /** An API; ids ascend in creation order, so a page of several is the same on every door. */
  api(name?: string): Promise<string>;
  /** A key made through keys.createKey (secret prefixed `cf`), with more of its settings. */
  key(apiId: string, body?: Record<string, unknown>): Promise<{ keyId: string; key: string }>;
  identity(externalId: string, meta?: JsonObject): Promise<string>;
  permission(slug: string): Promise<string>;
  /** A role holding the permissions of these slugs (created with them). */
  role(name: string, slugs?: string[]): Promise<string>;
  /** A rate-limit namespace; `deleted` makes it one the limit procedures answer 410 for. */
  namespace(name: string, opts?: { deleted?: boolean }): Promise<string>;
  /** Calls a procedure through the gRPC door as the workspace's root key; must succeed. */
  // biome-ignore lint/suspicious/noExplicitAny: the JSON form of any procedure's data
  call(procedure: ProcedureName, body: Record<string, unknown>): Promise<any>;
  /** Writes the verification events still buffered, so that analytics sees them. */
  flushEvents(): Promise<void>;
  /** Registers a value the call's answer may show (an id the setup learnt otherwise). */
  know(kind: string, value: string): void;
}

/** Creates a fresh workspace and the Given of one row's call on one door. */
export async function given(s: TestServer, known: Placeholders): Promise<Given> {
  const now = s.clock.now();
  const workspaceId = newId("ws");
  known.add("ws", workspaceId);
  // Straight into storage: through the admin commands (a transaction each, with audit records
  // no row reads) the setups took three times as long.
  await workspaceInsert(s.db, {
    id: workspaceId,
    name: "conformance",
    isDefault: false,
    createdAt: now,
  });
  /** A root key of the workspace, registered as a placeholder. */
  const rootKey = async (permissions: string[]) => {
    const id = newId("rk");
    const secret = generateKey("root", 24);
    await rootKeyInsert(s.db, {
      id,
      workspaceId,
      hash: s.app.deps.config.keyHashing.stored(secret),
      start: keyStart(secret, "root"),
      name: null,
      permissions,
      createdAt: now,
      expiresAt: null,
      revokedAt: null,
    });
    known.add("rk", id);
    return secret;
  };
  const admin = await rootKey(["*.*.*"]);
  let sequence = 0;
  /** An id of this prefix that sorts after the ones this setup made before it. */
  const orderedId = (prefix: string) => {
    const id = `${prefix}_${String(++sequence).padStart(4, "0")}${randomString(12)}`;
    known.add(prefix, id);
    return id;
  };
  const permission = async (slug: string) => {
    const id = orderedId("perm");
    await permissionInsert(s.db, {
      id,
      workspaceId,
      name: slug,
      slug,
      description: null,
      createdAt: now,
    });
    return id;
  };

  const g: Given = {
    workspaceId,
    rootKey: admin,
    now,
    rootKeyWith: rootKey,
    async api(name = "conformance api") {
      const id = orderedId("api");
      await apiInsert(s.db, {
        id,
        workspaceId,
        name,
        keyFormat: "checksummed",
        leakPolicy: "disable",
        createdAt: now,
      });
      return id;
    },
    async key(apiId, body = {}) {
      const data = await g.call("keys.createKey", { apiId, prefix: KEY_PREFIX, ...body });
      known.add("key", data.keyId);
      known.add("secret", data.key);
      known.add("start", data.key.slice(0, KEY_PREFIX.length + 5));
      return { keyId: data.keyId, key: data.key };
    },
    async identity(externalId, meta) {
      const id = orderedId("id");
      await identityInsert(s.db, {
        id,
        workspaceId,
        externalId,
        meta: meta ?? null,
        createdAt: now,
        updatedAt: null,
        deletedAt: null,
        ...UNLIMITED,
      });
      return id;
    },
    permission,
    async role(name, slugs = []) {
      const id = orderedId("role");
      await roleInsert(s.db, { id, workspaceId, name, description: null, createdAt: now });
      // A slug may exist already, made by an earlier helper or call of this setup.
      const existing = new Set(
        (await permissionsBySlugs(s.db, workspaceId, slugs)).map((p) => p.slug),
      );
      for (const slug of slugs) if (!existing.has(slug)) await permission(slug);
      const ids = (await permissionsBySlugs(s.db, workspaceId, slugs)).map((p) => p.id);
      await roleAddPermissions(s.db, workspaceId, id, ids, now);
      return id;
    },
    async namespace(name, opts = {}) {
      const id = orderedId("rlns");
      await namespaceInsertIfAbsent(s.db, {
        id,
        workspaceId,
        name,
        createdAt: now,
        deletedAt: null,
      });
      if (opts.deleted)
        await s.db.query("update ratelimit_namespaces set deleted_at = $1 where id = $2", [
          now,
          id,
        ]);
      return id;
    },
    async call(procedure, body) {
      const res = await s.call("grpc", procedure, body, admin);
      if (res.status !== 200)
        throw new Error(`setup call ${procedure} failed: ${JSON.stringify(res.error)}`);
      return res.data;
    },
    async flushEvents() {
      await s.app.deps.events.flush();
    },
    know: (kind, value) => known.add(kind, value),
  };
  return g;
}
