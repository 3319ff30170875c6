import type { Given } from "../given.js";
import { CODES, invalid, ok, type Row, refused } from "../row.js";

const WINDOW = { limit: 2, duration: 60_000 };

/** A namespace with an override for the identifier "vip"; returns the namespace's id. */
async function withOverride(g: Given, namespace = "api.calls"): Promise<string> {
  const id = await g.namespace(namespace);
  const { overrideId } = await g.call("ratelimit.setOverride", {
    namespace,
    identifier: "vip",
    limit: 100,
    duration: 60_000,
  });
  g.know("rlor", overrideId);
  return id;
}

export const LIMIT_ROWS: Row[] = [
  ok("ratelimit.limit", "the last request of a window, in a new namespace", async (g) => {
    await g.call("ratelimit.limit", { namespace: "api.calls", identifier: "u1", ...WINDOW });
    return { body: { namespace: "api.calls", identifier: "u1", ...WINDOW } };
  }),
  ok("ratelimit.limit", "a request over the limit", async (g) => {
    await g.call("ratelimit.limit", {
      namespace: "api.calls",
      identifier: "u1",
      ...WINDOW,
      cost: 2,
    });
    return { body: { namespace: "api.calls", identifier: "u1", ...WINDOW } };
  }),
  ok("ratelimit.limit", "an identifier with an override", async (g) => {
    await withOverride(g);
    return { body: { namespace: "api.calls", identifier: "vip", ...WINDOW, cost: 5 } };
  }),
  refused("ratelimit.limit", "a deleted namespace", 410, CODES.namespaceGone, async (g) => {
    await g.namespace("retired", { deleted: true });
    return { body: { namespace: "retired", identifier: "u1", ...WINDOW } };
  }),
  invalid(
    "ratelimit.limit",
    "a window under a second and no limit",
    ["/limit", "/duration"],
    async () => ({
      body: { namespace: "api.calls", identifier: "u1", limit: 0, duration: 10 },
    }),
  ),

  ok("ratelimit.multiLimit", "two limits, one exceeded", async (g) => {
    await g.call("ratelimit.limit", {
      namespace: "api.calls",
      identifier: "u2",
      ...WINDOW,
      cost: 2,
    });
    return {
      body: {
        limits: [
          { namespace: "api.calls", identifier: "u1", ...WINDOW },
          { namespace: "api.calls", identifier: "u2", ...WINDOW },
        ],
      },
    };
  }),
  refused("ratelimit.multiLimit", "a deleted namespace", 410, CODES.namespaceGone, async (g) => {
    await g.namespace("retired", { deleted: true });
    return { body: { limits: [{ namespace: "retired", identifier: "u1", ...WINDOW }] } };
  }),
  invalid("ratelimit.multiLimit", "no limits", ["/limits"], async () => ({ body: { limits: [] } })),
];

export const OVERRIDE_ROWS: Row[] = [
  ok("ratelimit.setOverride", "a wildcard override", async (g) => {
    await g.namespace("api.calls");
    return { body: { namespace: "api.calls", identifier: "gold*", limit: 50, duration: 1000 } };
  }),
  refused(
    "ratelimit.setOverride",
    "an unknown namespace",
    404,
    CODES.namespaceNotFound,
    async () => ({
      body: { namespace: "nowhere", identifier: "vip", limit: 1, duration: 1000 },
    }),
  ),
  invalid("ratelimit.setOverride", "a window over 30 days", ["/duration"], async (g) => {
    await g.namespace("api.calls");
    return {
      body: { namespace: "api.calls", identifier: "vip", limit: 1, duration: 2_592_000_001 },
    };
  }),

  ok("ratelimit.getOverride", "by the namespace's id", async (g) => ({
    body: { namespace: await withOverride(g), identifier: "vip" },
  })),
  refused(
    "ratelimit.getOverride",
    "an identifier without one",
    404,
    CODES.overrideNotFound,
    async (g) => {
      await withOverride(g);
      return { body: { namespace: "api.calls", identifier: "nobody" } };
    },
  ),
  refused(
    "ratelimit.getOverride",
    "an unknown namespace",
    404,
    CODES.namespaceNotFound,
    async () => ({
      body: { namespace: "nowhere", identifier: "vip" },
    }),
  ),

  ok("ratelimit.listOverrides", "the namespace's overrides", async (g) => {
    await withOverride(g);
    return { body: { namespace: "api.calls", limit: 10 } };
  }),
  refused(
    "ratelimit.listOverrides",
    "a key that may not read overrides",
    403,
    CODES.forbidden,
    async (g) => {
      await withOverride(g);
      return { body: { namespace: "api.calls" }, auth: await g.rootKeyWith(["ratelimit.*.limit"]) };
    },
  ),

  ok("ratelimit.deleteOverride", "deletes an override", async (g) => {
    await withOverride(g);
    return { body: { namespace: "api.calls", identifier: "vip" } };
  }),
  refused(
    "ratelimit.deleteOverride",
    "an override deleted before",
    404,
    CODES.overrideNotFound,
    async (g) => {
      await withOverride(g);
      await g.call("ratelimit.deleteOverride", { namespace: "api.calls", identifier: "vip" });
      return { body: { namespace: "api.calls", identifier: "vip" } };
    },
  ),
];
