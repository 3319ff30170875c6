import { expect } from "vitest";
import type { TestServer } from "../../../harness/server.js";

/** The ids of the sample the query-language tests read. */
export interface Sample {
  apiA: string;
  apiB: string;
  foreignApi: string;
}

/** What a test verification adds to the key: tags, a permissions query, the key's API. */
interface VerifyOptions {
  tags?: string[];
  permissions?: string;
  apiId?: string;
}

/**
 * Seven verifications in the test's workspace, which the day rollup holds as four rows:
 * - api A, alice, VALID, tags {path=/a, region=eu}, count 3
 * - api A, alice, INSUFFICIENT_PERMISSIONS, no tags, count 1
 * - api A, bob, VALID, no tags, count 1
 * - api B, no identity, VALID, tags {path=/b}, count 2
 * plus one rate-limit decision, and five verifications in another workspace that no query of
 * this workspace may see.
 */
export async function seedSample(s: TestServer): Promise<Sample> {
  const alice = await s.seed.key({ externalId: "alice", permissions: ["docs.read"] });
  const apiA = alice.apiId;
  const bob = await s.seed.key({ apiId: apiA, externalId: "bob" });
  const anonymous = await s.seed.key();
  // Header-less, scoped by the key's API: the instance holds two workspaces.
  const verify = async (k: { key: string; apiId: string }, body: VerifyOptions = {}) => {
    const res = await s.as(null).keys.verifyKey({ key: k.key, apiId: k.apiId, ...body });
    expect(res.data?.keyId).toBeDefined();
  };
  for (let i = 0; i < 3; i++) await verify(alice, { tags: ["region=eu", "path=/a"] });
  await verify(alice, { permissions: "docs.write" });
  await verify(bob);
  for (let i = 0; i < 2; i++) await verify(anonymous, { tags: ["path=/b"] });
  const limited = await s.api.ratelimit.limit({
    namespace: "sample.ns",
    identifier: "u",
    limit: 1n,
    duration: 60_000n,
  });
  expect(limited.data?.success).toBe(true);
  const ws = await s.seed.workspace();
  const foreignRoot = await s.seed.rootKey(["*.*.*"], ws);
  const foreignApi = await s.seed.api(ws);
  const foreign = await s.seed.key({ apiId: foreignApi, externalId: "alice" }, foreignRoot);
  for (let i = 0; i < 5; i++) await verify(foreign, { tags: ["path=/a"] });
  await s.app.deps.events.flush();
  return { apiA, apiB: anonymous.apiId, foreignApi };
}
