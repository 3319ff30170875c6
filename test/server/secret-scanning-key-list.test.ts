import { generateKeyPairSync, sign } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../gen/latchkey/v2/keys_pb.js";
import { ServiceError } from "../../src/errors/service-error.js";
import { PublicKeys } from "../../src/services/secret-scanning/public-keys.js";
import { TestClock } from "../harness/clock.js";
import { type TestServer, useServer } from "../harness/server.js";

// GITHUB_SECRET_SCANNING_PUBLIC_KEYS as a URL: GitHub's key list served by a local HTTP
// server, fetched when first needed, kept, fetched again early (at most every 5 minutes) for
// an identifier it lacks, and a 503 while it cannot be had at all.

const github = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const PEM = github.publicKey.export({ type: "spki", format: "pem" }).toString();
const LIST = { public_keys: [{ key_identifier: "gh_key_1", key: PEM, is_current: true }] };

/** The key list's host: answers the list, or fails as `mode` says, counting requests. */
const host = { mode: "ok" as "ok" | "fail" | "hang", requests: 0 };
let listServer: Server;
let listUrl = "";
beforeAll(async () => {
  listServer = createServer((_req, res) => {
    host.requests++;
    if (host.mode === "hang") return; // never answers
    if (host.mode === "fail") {
      res.writeHead(500).end("down");
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(LIST));
  });
  await new Promise<void>((resolve) => listServer.listen(0, "127.0.0.1", resolve));
  listUrl = `http://127.0.0.1:${(listServer.address() as AddressInfo).port}/meta/public_keys`;
});
afterAll(async () => {
  listServer.closeAllConnections();
  await new Promise((resolve) => listServer.close(resolve));
});

// The URL is known only once the list's host listens: the setting is read when the server starts.
const s = useServer({
  config: {
    get githubSecretScanningPublicKeys() {
      return { kind: "url" as const, url: listUrl };
    },
  },
});

function report(server: TestServer, matches: unknown, id = "gh_key_1") {
  const body = JSON.stringify(matches);
  return server.raw("/v2/secret-scanning/github", {
    method: "POST",
    body,
    headers: {
      "content-type": "application/json",
      "github-public-key-identifier": id,
      "github-public-key-signature": sign("sha256", Buffer.from(body), github.privateKey).toString(
        "base64",
      ),
    },
  });
}

describe("a key list at a URL", () => {
  it("is fetched when first needed and kept; a stale one is fetched again", async () => {
    host.mode = "ok";
    const { key } = (await s.api.keys.createKey({ apiId: await s.seed.api() })).data ?? {};
    const first = host.requests;
    const res = await report(s, [{ token: key, type: "t", url: "", source: "content" }]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([{ token_raw: key, token_type: "t", label: "true_positive" }]);
    expect(
      await (async () => (await s.api.keys.verifyKey({ key: key as string })).data?.code)(),
    ).toBe(VerifyKeyCode.DISABLED);
    expect(host.requests).toBe(first + 1);
    await report(s, [{ token: "nothing" }]);
    expect(host.requests).toBe(first + 1);
    s.clock.advance(3_600_000);
    expect((await report(s, [{ token: "nothing" }])).status).toBe(200);
    expect(host.requests).toBe(first + 2);
  });

  it("is fetched again early for an identifier it lacks, at most every 5 minutes", async () => {
    host.mode = "ok";
    s.clock.advance(300_000);
    const before = host.requests;
    expect((await report(s, [{ token: "x" }], "gh_key_unknown")).status).toBe(401);
    expect((await report(s, [{ token: "x" }], "gh_key_other")).status).toBe(401);
    expect(host.requests).toBe(before + 1);
    s.clock.advance(300_000);
    expect((await report(s, [{ token: "x" }], "gh_key_unknown")).status).toBe(401);
    expect(host.requests).toBe(before + 2);
  });

  it("stays in use while its host fails", async () => {
    host.mode = "fail";
    s.clock.advance(3_600_000);
    const res = await report(s, [{ token: "x" }]);
    expect(res.status).toBe(200);
    host.mode = "ok";
  });
});

describe("a key list that cannot be had", () => {
  const fresh = useServer({
    config: {
      get githubSecretScanningPublicKeys() {
        return { kind: "url" as const, url: listUrl };
      },
    },
  });

  it("answers 503, writing nothing, and is tried again 10 s later", async () => {
    host.mode = "fail";
    const before = await fresh.snapshot();
    const res = await report(fresh, [{ token: "x" }]);
    expect(res.status).toBe(503);
    expect(res.body.error.type).toContain("service_unavailable");
    const tried = host.requests;
    expect((await report(fresh, [{ token: "x" }])).status).toBe(503);
    expect(host.requests).toBe(tried);
    expect(await fresh.changesSince(before)).toEqual({});
    host.mode = "ok";
    fresh.clock.advance(10_000);
    expect((await report(fresh, [{ token: "x" }])).status).toBe(200);
  });

  it("is given up on after the fetch timeout when its host never answers", async () => {
    host.mode = "hang";
    const timing = { timeoutMs: 200, freshMs: 3_600_000, minRefetchMs: 300_000, retryMs: 10_000 };
    const keys = new PublicKeys(
      { kind: "url", url: listUrl },
      new TestClock(),
      pino({ level: "silent" }),
      timing,
    );
    const err = await keys.find("gh_key_1").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect((err as ServiceError).entry.status).toBe(503);
    host.mode = "ok";
  });
});
