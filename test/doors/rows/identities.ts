import { CODES, invalid, ok, type Row, refused } from "../row.js";

const LIMITS = [{ name: "requests", limit: 10, duration: 60_000, autoApply: true }];

export const IDENTITY_ROWS: Row[] = [
  ok("identities.createIdentity", "an identity with metadata and a rate limit", async () => ({
    body: { externalId: "carol", meta: { tier: "gold" }, ratelimits: LIMITS },
  })),
  ok("identities.createIdentity", "an identity with a credit pool and a refill", async () => ({
    body: {
      externalId: "pool",
      credits: { remaining: 100, refill: { interval: "monthly", amount: 100, refillDay: 1 } },
    },
  })),
  refused(
    "identities.createIdentity",
    "a taken externalId",
    409,
    CODES.identityExists,
    async (g) => {
      await g.identity("carol");
      return { body: { externalId: "carol" } };
    },
  ),
  invalid(
    "identities.createIdentity",
    "a bad externalId and a repeated limit name",
    ["/externalId", "/ratelimits/1/name"],
    async () => ({ body: { externalId: "no spaces", ratelimits: [...LIMITS, ...LIMITS] } }),
  ),

  ok("identities.getIdentity", "by externalId", async (g) => {
    await g.call("identities.createIdentity", {
      externalId: "dave",
      meta: { tier: "silver" },
      ratelimits: LIMITS,
    });
    return { body: { externalId: "dave" } };
  }),
  ok("identities.getIdentity", "by id", async (g) => ({
    body: { identity: await g.identity("erin", { tier: "bronze" }) },
  })),
  ok("identities.getIdentity", "an identity with a credit pool", async (g) => {
    await g.call("identities.createIdentity", {
      externalId: "pooled",
      credits: { remaining: 5, refill: { interval: "daily", amount: 5 } },
    });
    return { body: { externalId: "pooled" } };
  }),
  refused(
    "identities.getIdentity",
    "an unknown identity",
    404,
    CODES.identityNotFound,
    async () => ({
      body: { identity: "nobody" },
    }),
  ),
  invalid(
    "identities.getIdentity",
    "both an identity and an externalId",
    ["/externalId"],
    async () => ({
      body: { identity: "a", externalId: "b" },
    }),
  ),

  ok("identities.listIdentities", "a first page of one of two", async (g) => {
    await g.identity("first", { n: 1 });
    await g.identity("second");
    return { body: { limit: 1 } };
  }),
  invalid("identities.listIdentities", "a page size of 101", ["/limit"], async () => ({
    body: { limit: 101 },
  })),
  refused(
    "identities.listIdentities",
    "a key that may read no identity",
    403,
    CODES.forbidden,
    async (g) => ({
      body: {},
      auth: await g.rootKeyWith(["identity.*.create_identity"]),
    }),
  ),

  ok("identities.updateIdentity", "replaces the metadata and the rate limits", async (g) => {
    await g.identity("frank", { tier: "gold" });
    return {
      body: {
        externalId: "frank",
        meta: null,
        ratelimits: [{ name: "daily", limit: 100, duration: 86_400_000 }],
      },
    };
  }),
  ok("identities.updateIdentity", "sets a credit pool", async (g) => {
    await g.identity("judy");
    return { body: { externalId: "judy", credits: { remaining: 25 } } };
  }),
  invalid(
    "identities.updateIdentity",
    "a monthly refill without its day",
    ["/credits/refill/refillDay"],
    async (g) => {
      await g.identity("mallory");
      return {
        body: {
          externalId: "mallory",
          credits: { remaining: 1, refill: { interval: "monthly", amount: 5 } },
        },
      };
    },
  ),
  refused(
    "identities.updateIdentity",
    "an unknown identity",
    404,
    CODES.identityNotFound,
    async () => ({
      body: { externalId: "nobody", meta: { a: 1 } },
    }),
  ),
  invalid(
    "identities.updateIdentity",
    "a window under a second",
    ["/ratelimits/0/duration"],
    async (g) => {
      await g.identity("grace");
      return {
        body: { identity: "grace", ratelimits: [{ name: "fast", limit: 1, duration: 10 }] },
      };
    },
  ),

  ok("identities.deleteIdentity", "deletes an identity", async (g) => ({
    body: { identity: await g.identity("heidi") },
  })),
  refused(
    "identities.deleteIdentity",
    "an identity deleted before",
    404,
    CODES.identityNotFound,
    async (g) => {
      await g.identity("ivan");
      await g.call("identities.deleteIdentity", { externalId: "ivan" });
      return { body: { externalId: "ivan" } };
    },
  ),
];
