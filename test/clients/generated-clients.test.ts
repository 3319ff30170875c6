import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, describe, expect, it } from "vitest";
import {
  createLatchkeyClient,
  ErrorDetailSchema,
  type LatchkeyClient,
  type LatchkeyClientOptions,
  rootKeyInterceptor,
  VerifyKeyCode,
} from "../../packages/client/src/index.js";
import { useServer } from "../harness/server.js";
import {
  buildGoClient,
  generatePythonClient,
  goToolchain,
  pythonToolchain,
  ROOT,
  runClient,
} from "./toolchains.js";

// Clients generated from proto/ by other languages' stock toolchains, as docs/clients.md
// tells a team to, calling the gRPC port: verify_key.go and verify_key.py create an API
// and a key, verify it and a wrong one, and read the ErrorDetail of a refused call. Then the
// TypeScript package's own code (packages/client), in process, each way it can reach the
// server; test/package/pack.test.ts installs that package packed and runs it on another Node.

const s = useServer();
const dir = mkdtempSync(join(tmpdir(), "latchkey-clients-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const go = goToolchain();
const python = pythonToolchain();
const skipped = (missing: string[]) =>
  missing.length === 0
    ? ""
    : ` (skipped: ${missing.join(", ")} not installed; .ci/run installs them)`;

/** What both programs must have seen, and the server must agree with. */
// biome-ignore lint/suspicious/noExplicitAny: the programs print free-form JSON
async function expectVerified(answer: any, apiName: string, invalidArgument: string) {
  expect(answer).toMatchObject({
    valid: true,
    code: "VERIFY_KEY_CODE_VALID",
    unknownCode: "VERIFY_KEY_CODE_NOT_FOUND",
    refused: {
      grpcCode: invalidArgument,
      code: "err:svc:application:invalid_input",
      status: 400,
      location: "/name",
    },
  });
  expect(answer.refused.requestId).toMatch(/^req_/);
  const api = await s.call("json", "apis.getApi", { apiId: answer.apiId });
  expect(api.data.name).toBe(apiName);
  const key = await s.call("json", "keys.getKey", { keyId: answer.keyId });
  expect(key.status).toBe(200);
}

describe.skipIf(go.found === undefined)(
  `a Go client from plain protoc${skipped(go.missing)}`,
  () => {
    it("builds against Debian's grpc-go and verifies a key over gRPC", async () => {
      const tools = go.found as NonNullable<typeof go.found>;
      const binary = await buildGoClient(tools, join(dir, "go"));
      const answer = await runClient(binary, [], {
        grpcAddress: `127.0.0.1:${s.app.grpcPort}`,
        rootKey: s.rootKey,
      });
      await expectVerified(answer, "from-go", "InvalidArgument");
      // A cold Go build cache compiles grpc-go first; later runs only link.
    }, 600_000);
  },
);

describe.skipIf(python.found === undefined)(
  `a Python client from plain protoc${skipped(python.missing)}`,
  () => {
    it("imports with Debian's grpcio and verifies a key over gRPC", async () => {
      const tools = python.found as NonNullable<typeof python.found>;
      const out = join(dir, "python");
      await generatePythonClient(tools, out);
      const answer = await runClient(tools.python, [join(ROOT, "test/clients/verify_key.py")], {
        grpcAddress: `127.0.0.1:${s.app.grpcPort}`,
        rootKey: s.rootKey,
        pythonPath: out,
      });
      await expectVerified(answer, "from-python", "INVALID_ARGUMENT");
    }, 120_000);
  },
);

/** Creates an API and a key through `client` and verifies the key; returns the verdict. */
async function roundTrip(client: LatchkeyClient): Promise<VerifyKeyCode | undefined> {
  const api = await client.apis.createApi({ name: "from-typescript" });
  const key = await client.keys.createKey({ apiId: api.data?.apiId ?? "" });
  const verified = await client.keys.verifyKey({ key: key.data?.key ?? "" });
  return verified.data?.code;
}

describe("the TypeScript client @latchkey/client", () => {
  const fetchWays: [string, Partial<LatchkeyClientOptions>][] = [
    ["Connect with JSON (the default)", {}],
    ["Connect with protobuf binary", { useBinaryFormat: true }],
    ["gRPC-web", { protocol: "grpc-web" }],
  ];
  it.each(fetchWays)("calls the main port over fetch with %s", async (_, way) => {
    const client = createLatchkeyClient({ baseUrl: s.url, rootKey: s.rootKey, ...way });
    expect(await roundTrip(client)).toBe(VerifyKeyCode.VALID);
  });

  it("calls through a transport it is given: gRPC over HTTP/2 on the gRPC port", async () => {
    const transport = createGrpcTransport({
      baseUrl: `http://127.0.0.1:${s.app.grpcPort}`,
      interceptors: [rootKeyInterceptor(s.rootKey)],
    });
    expect(await roundTrip(createLatchkeyClient({ transport }))).toBe(VerifyKeyCode.VALID);
  });

  it("throws a refusal as a ConnectError carrying the catalog's ErrorDetail", async () => {
    const anonymous = createLatchkeyClient({ baseUrl: s.url });
    const err = await anonymous.apis.createApi({ name: "no-root-key" }).then(
      () => expect.fail("a call without a root key was answered"),
      (e: unknown) => ConnectError.from(e),
    );
    expect(err.code).toBe(Code.Unauthenticated);
    expect(err.findDetails(ErrorDetailSchema)[0]).toMatchObject({
      status: 401,
      code: "err:svc:authentication:missing",
    });
  });

  it("names the protocols it offers when given another", () => {
    const grpc = { baseUrl: s.url, protocol: "grpc" } as unknown as LatchkeyClientOptions;
    expect(() => createLatchkeyClient(grpc)).toThrow(
      /"connect" or "grpc-web".*createGrpcTransport/,
    );
  });
});
