import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { LeakPolicy } from "../../gen/latchkey/v2/apis_pb.js";
import { VerifyKeyCode } from "../../gen/latchkey/v2/keys_pb.js";
import { keyIdentifierOf, readPublicKeySetting } from "../../src/domain/github-keys.js";
import { KeyHashing } from "../../src/domain/key-hashing.js";
import { REPORT_BOUNDS } from "../../src/domain/secret-scanning-report.js";
import { type TestServer, useServer } from "../harness/server.js";

// POST /v2/secret-scanning/github, GitHub's secret-scanning partner programme: a signed
// JSON array of matches, answered with a label per match; each leaked key gets its API's
// policy. The signing key pair is made here; the server trusts its public half as PEM.

const PATH = "/v2/secret-scanning/github";
const github = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const stranger = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const KEY_ID = keyIdentifierOf(github.publicKey);
const PEM = github.publicKey.export({ type: "spki", format: "pem" }).toString();

const s = useServer({ config: { githubSecretScanningPublicKeys: readPublicKeySetting(PEM) } });

type Match = { token: string; type?: string; url?: string; source?: string };

function signed(body: string, key: KeyObject = github.privateKey, id = KEY_ID) {
  return {
    "content-type": "application/json",
    "github-public-key-identifier": id,
    "github-public-key-signature": sign("sha256", Buffer.from(body), key).toString("base64"),
  };
}

/** Posts a report signed by GitHub's key (or as `headers` say) to the server. */
function report(server: TestServer, matches: unknown, headers?: Record<string, string>) {
  const body = typeof matches === "string" ? matches : JSON.stringify(matches);
  return server.raw(PATH, { method: "POST", body, headers: headers ?? signed(body) });
}

function match(token: string, url = "https://github.com/o/r/blob/abc/.env"): Match {
  return { token, type: "latchkey_api_key", url, source: "content" };
}

async function keyIn(apiId: string) {
  const { data } = await s.api.keys.createKey({ apiId, prefix: "lk" });
  return { keyId: data?.keyId as string, key: data?.key as string };
}

async function events(keyId: string) {
  const rows = await s.db.query<{ event: string; actor_id: string; workspace_id: string }>(
    "select event, actor_id, workspace_id from audit_logs where resource_id = $1 order by id",
    [keyId],
  );
  return rows.map((r) => r.event);
}

/**
 * A snapshot once the verification events of earlier calls are written (their writer updates
 * keys' last use in the background, which a snapshot taken meanwhile would count as a change).
 */
async function quiet() {
  await s.app.deps.events.flush();
  return s.snapshot();
}

const verify = async (key: string) => (await s.api.keys.verifyKey({ key })).data?.code;

describe("the secret-scanning receiver", () => {
  it("disables a reported key by default, audits key.leaked and answers true_positive", async () => {
    const { keyId, key } = await keyIn(await s.seed.api());
    const res = await report(s, [match(key), match("lk_notAKeyOfOurs1234567890")]);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(res.body).toEqual([
      { token_raw: key, token_type: "latchkey_api_key", label: "true_positive" },
      {
        token_raw: "lk_notAKeyOfOurs1234567890",
        token_type: "latchkey_api_key",
        label: "false_positive",
      },
    ]);
    expect(await verify(key)).toBe(VerifyKeyCode.DISABLED);
    expect(await events(keyId)).toEqual(["key.create", "key.update", "key.leaked"]);
    const [leaked] = await s.db.query<{
      description: string;
      actor_id: string;
      request_id: string;
    }>(
      "select description, actor_id, request_id from audit_logs where resource_id = $1 and event = 'key.leaked'",
      [keyId],
    );
    expect(leaked).toEqual({
      description: `Key ${keyId} was reported leaked in content at https://github.com/o/r/blob/abc/.env; policy disable: the key was disabled.`,
      actor_id: "github_secret_scanning",
      request_id: res.headers.get("x-request-id"),
    });
    const leaks = await s.db.query(
      "select key_id, source, url, policy from key_leaks where key_id = $1",
      [keyId],
    );
    expect(leaks).toEqual([
      { key_id: keyId, source: "content", url: match(key).url, policy: "disable" },
    ]);
  });

  it("shows the leak in the workspace's audit log, the system the actor", async () => {
    const { keyId, key } = await keyIn(await s.seed.api());
    const res = await report(s, [match(key)]);
    const { data } = await s.api.analytics.listAuditLogs({
      event: "key.leaked",
      resourceId: keyId,
    });
    expect(data).toEqual([
      expect.objectContaining({
        event: "key.leaked",
        actor: expect.objectContaining({ type: "system", id: "github_secret_scanning" }),
        resource: expect.objectContaining({ type: "key", id: keyId }),
        requestId: res.headers.get("x-request-id"),
      }),
    ]);
  });

  it("revokes a key of an API whose policy is revoke, as deleteKey does", async () => {
    const apiId = await s.seed.api(undefined, undefined, { leakPolicy: "revoke" });
    const { keyId, key } = await keyIn(apiId);
    expect(await verify(key)).toBe(VerifyKeyCode.VALID); // cached, and must not stay so
    const res = await report(s, [match(key)]);
    expect(res.body).toEqual([expect.objectContaining({ label: "true_positive" })]);
    expect(await verify(key)).toBe(VerifyKeyCode.NOT_FOUND);
    expect((await s.call("json", "keys.getKey", { keyId })).status).toBe(404);
    expect(await events(keyId)).toEqual(["key.create", "key.delete", "key.leaked"]);
  });

  it("only records a key of an API whose policy is notify: it keeps verifying", async () => {
    const apiId = await s.seed.api(undefined, undefined, { leakPolicy: "notify" });
    const { keyId, key } = await keyIn(apiId);
    await report(s, [match(key)]);
    expect(await verify(key)).toBe(VerifyKeyCode.VALID);
    expect(await events(keyId)).toEqual(["key.create", "key.leaked"]);
  });

  it("applies the policy an API was given by apis.updateApi to the keys reported afterwards", async () => {
    const apiId = await s.seed.api(undefined, undefined, { leakPolicy: "notify" });
    const first = await keyIn(apiId);
    const second = await keyIn(apiId);
    await report(s, [match(first.key)]);
    await s.api.apis.updateApi({ apiId, leakPolicy: LeakPolicy.REVOKE });
    await report(s, [match(second.key)]);
    expect(await verify(first.key)).toBe(VerifyKeyCode.VALID);
    expect(await verify(second.key)).toBe(VerifyKeyCode.NOT_FOUND);
    expect(await events(second.keyId)).toEqual(["key.create", "key.delete", "key.leaked"]);
  });

  it("changes nothing for a report it has seen, and records a new place without changing more", async () => {
    const { keyId, key } = await keyIn(await s.seed.api());
    await report(s, [match(key)]);
    const before = await quiet();
    const again = await report(s, [match(key), match(key)]);
    expect(again.body).toEqual([
      expect.objectContaining({ label: "true_positive" }),
      expect.objectContaining({ label: "true_positive" }),
    ]);
    expect(await s.changesSince(before)).toEqual({});
    await report(s, [match(key, "https://github.com/o/r/issues/1")]);
    expect(await events(keyId)).toEqual(["key.create", "key.update", "key.leaked", "key.leaked"]);
    expect(await verify(key)).toBe(VerifyKeyCode.DISABLED);
  });

  it("recognises a revoked key reported again, writing nothing", async () => {
    const apiId = await s.seed.api(undefined, undefined, { leakPolicy: "revoke" });
    const { key } = await keyIn(apiId);
    await report(s, [match(key)]);
    const before = await quiet();
    const res = await report(s, [match(key, "https://github.com/elsewhere")]);
    expect(res.body).toEqual([expect.objectContaining({ label: "true_positive" })]);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("applies a leak in the key's own workspace, each workspace holding the secret by its own policy", async () => {
    const theirs = await s.seed.workspace();
    const secret = `legacy_${Date.now()}_shared_secret`;
    const hash = createHash("sha256").update(secret).digest("base64");
    const ours = await s.seed.api(undefined, undefined, { leakPolicy: "notify" });
    const other = await s.seed.api(theirs, undefined, { leakPolicy: "revoke" });
    const mine = await s.api.keys.migrateKeys({
      migrationId: "m_shared",
      apiId: ours,
      keys: [{ hash }],
    });
    const root = await s.seed.rootKey(["api.*.*"], theirs);
    const them = await s
      .as(root)
      .keys.migrateKeys({ migrationId: "m_shared", apiId: other, keys: [{ hash }] });
    const res = await report(s, [match(secret)]);
    expect(res.body).toEqual([
      { token_raw: secret, token_type: "latchkey_api_key", label: "true_positive" },
    ]);
    const rows = await s.db.query<{ resource_id: string; event: string; workspace_id: string }>(
      `select resource_id, event, workspace_id from audit_logs
       where resource_id = any($1::text[]) and event <> 'key.create' order by id`,
      [[mine.data?.migrated[0]?.keyId, them.data?.migrated[0]?.keyId]],
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        {
          resource_id: mine.data?.migrated[0]?.keyId,
          event: "key.leaked",
          workspace_id: s.workspaceId,
        },
        { resource_id: them.data?.migrated[0]?.keyId, event: "key.delete", workspace_id: theirs },
        { resource_id: them.data?.migrated[0]?.keyId, event: "key.leaked", workspace_id: theirs },
      ]),
    );
    expect(rows).toHaveLength(3);
    expect(await verify(secret)).toBe(VerifyKeyCode.VALID); // ours: notify
  });

  it("labels a plain-format key like a checksummed one", async () => {
    const plain = await keyIn(await s.seed.api(undefined, undefined, { keyFormat: "plain" }));
    const res = await report(s, [match(plain.key)]);
    expect(res.body).toEqual([expect.objectContaining({ label: "true_positive" })]);
  });
});

describe("the secret-scanning receiver refuses, writing nothing and looking nothing up,", () => {
  async function refused(
    matches: unknown,
    headers: Record<string, string>,
    status: number,
    code: string,
  ) {
    const { key } = await keyIn(await s.seed.api());
    const body = matches === "with a key" ? [match(key)] : matches;
    const before = await quiet();
    const res = await report(s, body, headers);
    expect(res.status).toBe(status);
    expect(res.body.error.type).toContain(code.replaceAll(":", "/").replace("err/svc/", "svc/"));
    expect(await s.changesSince(before)).toEqual({});
    expect(await verify(key)).toBe(VerifyKeyCode.VALID);
    return res;
  }

  const body = JSON.stringify([match("lk_x")]);

  it.each([
    ["no signature headers", { "content-type": "application/json" }],
    ["a signature by another key", signed(body, stranger.privateKey)],
    ["an unknown key identifier", signed(body, github.privateKey, "0".repeat(64))],
    ["a signature of another body", signed("[]")],
    [
      "a signature that is not base64 DER",
      { ...signed(body), "github-public-key-signature": "bm9wZQ==" },
    ],
    ["an over-long identifier", signed(body, github.privateKey, "a".repeat(300))],
  ])("answers %s with 401", async (_, headers) => {
    const res = await refused(
      "with a key",
      headers,
      401,
      "err:svc:authentication:invalid_signature",
    );
    expect(res.body.error.status).toBe(401);
  });

  it("answers a body over 1 MiB with 413", async () => {
    const big = JSON.stringify([{ token: "x".repeat(1024 * 1024) }]);
    await refused(big, signed(big), 413, "err:svc:bad_request:request_body_too_large");
  });

  it.each([
    ["bad JSON", "[{", ""],
    ["an object", "{}", ""],
    ["an item that is not an object", "[1]", "/0"],
    ["a token too long", [{ token: "x".repeat(REPORT_BOUNDS.maxTokenLength + 1) }], "/0/token"],
    ["no token", [{ type: "t" }], "/0/token"],
    ["a number as url", [{ token: "t", url: 5 }], "/0/url"],
    ["too many items", Array.from({ length: REPORT_BOUNDS.maxMatches + 1 }, () => match("t")), ""],
  ])("answers a signed report with %s with 400", async (_, matches, location) => {
    const text = typeof matches === "string" ? matches : JSON.stringify(matches);
    const res = await refused(text, signed(text), 400, "err:svc:application:invalid_input");
    expect(res.body.error.errors[0].location).toBe(location);
  });

  it("answers another content type with 415 and another method with 405", async () => {
    await refused(
      body,
      { ...signed(body), "content-type": "text/plain" },
      415,
      "unsupported_media_type",
    );
    const get = await s.raw(PATH);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });
});

describe("with KEY_HASH_PEPPER", () => {
  const peppered = useServer({
    config: {
      githubSecretScanningPublicKeys: readPublicKeySetting(PEM),
      keyHashing: new KeyHashing("pepper_for_the_leak_tests_0123456789"),
    },
  });

  it("finds a key stored under the pepper", async () => {
    const apiId = await peppered.seed.api();
    const { data } = await peppered.api.keys.createKey({ apiId });
    const res = await report(peppered, [match(data?.key as string)]);
    expect(res.body).toEqual([expect.objectContaining({ label: "true_positive" })]);
    const verdict = await peppered.api.keys.verifyKey({ key: data?.key as string });
    expect(verdict.data?.code).toBe(VerifyKeyCode.DISABLED);
  });
});

describe("without GITHUB_SECRET_SCANNING_PUBLIC_KEYS", () => {
  const off = useServer();

  it("the receiver's path is unknown: 404", async () => {
    const body = JSON.stringify([match("lk_x")]);
    const res = await report(off, body);
    expect(res.status).toBe(404);
    expect(res.body.error.type).toContain("route_not_found");
  });
});
