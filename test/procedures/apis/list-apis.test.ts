import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// apis.listApis: one page of the caller's workspace's live APIs, by id, filtered to the APIs
// a narrower root key may read.

const s = useServer();

/** A workspace of its own with these APIs (sorted by id) and an all-powerful root key. */
async function workspaceWith(names: string[]) {
  const workspaceId = await s.seed.workspace();
  const rootKey = await s.seed.rootKey(["*.*.*"], workspaceId);
  const ids: string[] = [];
  for (const name of names) ids.push(await s.seed.api(workspaceId, name));
  ids.sort();
  return { workspaceId, ids, apis: s.as(rootKey).apis };
}

describe("apis.listApis", () => {
  it("lists the workspace's live APIs by id, a page at a time", async () => {
    const w = await workspaceWith(["a api", "b api", "c api"]);
    const first = await w.apis.listApis({ limit: 2 });
    expect(first.data.map((a) => a.id)).toEqual(w.ids.slice(0, 2));
    expect(first.pagination).toMatchObject({ hasMore: true, cursor: w.ids[2] });
    const second = await w.apis.listApis({ limit: 2, cursor: first.pagination?.cursor });
    expect(second.data.map((a) => a.id)).toEqual(w.ids.slice(2));
    expect(second.pagination?.hasMore).toBe(false);
    expect(second.data[0]?.name).toMatch(/ api$/);
  });

  it("leaves out deleted APIs and never shows another workspace's", async () => {
    const w = await workspaceWith(["kept api", "gone api"]);
    const other = await workspaceWith(["foreign api"]);
    const [gone] = w.ids.filter((id) => id !== w.ids[0]);
    await w.apis.deleteApi({ apiId: gone });
    const page = await w.apis.listApis({});
    expect(page.data.map((a) => a.id)).toEqual([w.ids[0]]);
    expect(page.data.map((a) => a.id)).not.toContain(other.ids[0]);
  });

  it("lists only the APIs a per-API key may read, pages kept full", async () => {
    const w = await workspaceWith(["one", "two", "three", "four"]);
    const readable = [w.ids[0], w.ids[2], w.ids[3]] as string[];
    const narrow = await s.seed.rootKey(
      readable.map((id) => `api.${id}.read_api`),
      w.workspaceId,
    );
    const first = await s.as(narrow).apis.listApis({ limit: 2 });
    expect(first.data.map((a) => a.id)).toEqual(readable.slice(0, 2));
    expect(first.pagination?.hasMore).toBe(true);
    const rest = await s.as(narrow).apis.listApis({ limit: 2, cursor: first.pagination?.cursor });
    expect(rest.data.map((a) => a.id)).toEqual(readable.slice(2));
    expect(rest.pagination?.hasMore).toBe(false);
  });

  it("answers a key that may read no API with 403 naming api.*.read_api", async () => {
    const w = await workspaceWith(["hidden"]);
    const writer = await s.seed.rootKey(["api.*.create_api", "api.*.read_key"], w.workspaceId);
    const r = await refusal(s.as(writer).apis.listApis({}));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r).toMatchObject({
      status: 403,
      errorCode: "err:svc:authorization:insufficient_permissions",
    });
    expect(r.detail).toContain("api.*.read_api");
  });

  it.each([0, 101])("refuses a page size of %i with 400 at /limit", async (limit) => {
    const r = await refusal(s.api.apis.listApis({ limit }));
    expect(r.status).toBe(400);
    expect(r.errors.map((e) => e.location)).toEqual(["/limit"]);
  });
});
