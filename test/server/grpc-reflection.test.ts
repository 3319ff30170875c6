import { execFile } from "node:child_process";
import { promisify } from "node:util";
import {
  create,
  createFileRegistry,
  type DescMessage,
  fromBinary,
  fromJson,
  getExtension,
  type Message,
  toBinary,
} from "@bufbuild/protobuf";
import {
  type FieldOptions,
  type FileDescriptorProto,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { Authorization } from "../../gen/envoy/service/auth/v3/external_auth_pb.js";
import { ApisService, file_latchkey_v2_apis } from "../../gen/latchkey/v2/apis_pb.js";
import { rules } from "../../gen/latchkey/v2/options_pb.js";
import { SERVICES as LATCHKEY_SERVICES } from "../harness/doors.js";
import { useServer } from "../harness/server.js";

const run = promisify(execFile);
/** What the port serves: the Latchkey services and Envoy's authorization service. */
const SERVICES = [...LATCHKEY_SERVICES, Authorization];
const BUF = new URL("../../node_modules/.bin/buf", import.meta.url).pathname;

const s = useServer();

/** Runs `buf curl` over gRPC (cleartext HTTP/2) against the gRPC port; rejects on a non-zero exit. */
async function bufCurl(args: string[], path = ""): Promise<string> {
  const url = `http://127.0.0.1:${s.app.grpcPort}${path}`;
  const { stdout } = await run(
    BUF,
    ["curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args, url],
    { timeout: 30_000 },
  );
  return stdout;
}

const lines = (out: string) =>
  out
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");

describe("gRPC server reflection on the gRPC port", () => {
  it("lists every service the port serves without a key: latchkey.v2's and Envoy's ext_authz", async () => {
    const listed = lines(await bufCurl(["--list-services"]));
    for (const service of SERVICES) expect(listed).toContain(service.typeName);
    expect(listed.sort()).toEqual(SERVICES.map((x) => x.typeName).sort());
  });

  it("answers on grpc.reflection.v1alpha too", async () => {
    const listed = lines(await bufCurl(["--reflect-protocol", "grpc-v1alpha", "--list-services"]));
    for (const service of SERVICES) expect(listed).toContain(service.typeName);
  });

  it("lists the methods of every service", async () => {
    // --list-methods takes the base URL and lists the methods of all services.
    const listed = lines(await bufCurl(["--list-methods"]));
    const expected = SERVICES.flatMap((svc) => svc.methods.map((m) => `${svc.typeName}/${m.name}`));
    expect(listed.sort()).toEqual(expected.sort());
    expect(listed).toContain(`${ApisService.typeName}/CreateApi`);
  });

  it("calls a procedure with the schema it learned through reflection", async () => {
    const out = await bufCurl(
      ["-H", `authorization: Bearer ${s.rootKey}`, "-d", JSON.stringify({ name: "reflected" })],
      "/latchkey.v2.ApisService/CreateApi",
    );
    const res = JSON.parse(out);
    expect(res.data.apiId).toMatch(/^api_/);
    expect(res.meta.requestId).toMatch(/^req_/);
    const got = await s.call("json", "apis.getApi", { apiId: res.data.apiId });
    expect(got.data.name).toBe("reflected");
  });

  it("still authenticates the Latchkey services", async () => {
    const err = await bufCurl(
      ["-d", JSON.stringify({ name: "no key" })],
      "/latchkey.v2.ApisService/CreateApi",
    ).then(
      () => undefined,
      (e: { stderr?: string }) => e,
    );
    expect(err?.stderr).toMatch(/unauthenticated/i);
  });
});

// The reflection protocol's messages, described here independently of the server's codec
// so these tests read and write them with protobuf-es.
const reflectionFile = fromJson(FileDescriptorProtoSchema, {
  name: "grpc/reflection/v1/reflection.proto",
  package: "grpc.reflection.v1",
  syntax: "proto3",
  messageType: [
    {
      name: "ServerReflectionRequest",
      field: [
        { name: "host", number: 1, type: "TYPE_STRING", label: "LABEL_OPTIONAL" },
        ...["file_by_filename", "file_containing_symbol"].map((name, i) => ({
          name,
          number: 3 + i,
          type: "TYPE_STRING",
          label: "LABEL_OPTIONAL",
          oneofIndex: 0,
        })),
        {
          name: "file_containing_extension",
          number: 5,
          type: "TYPE_MESSAGE",
          typeName: ".grpc.reflection.v1.ExtensionRequest",
          label: "LABEL_OPTIONAL",
          oneofIndex: 0,
        },
        ...["all_extension_numbers_of_type", "list_services"].map((name, i) => ({
          name,
          number: 6 + i,
          type: "TYPE_STRING",
          label: "LABEL_OPTIONAL",
          oneofIndex: 0,
        })),
      ],
      oneofDecl: [{ name: "message_request" }],
    },
    {
      name: "ExtensionRequest",
      field: [
        { name: "containing_type", number: 1, type: "TYPE_STRING", label: "LABEL_OPTIONAL" },
        { name: "extension_number", number: 2, type: "TYPE_INT32", label: "LABEL_OPTIONAL" },
      ],
    },
    {
      name: "ServerReflectionResponse",
      field: [
        { name: "valid_host", number: 1, type: "TYPE_STRING", label: "LABEL_OPTIONAL" },
        {
          name: "original_request",
          number: 2,
          type: "TYPE_MESSAGE",
          typeName: ".grpc.reflection.v1.ServerReflectionRequest",
          label: "LABEL_OPTIONAL",
        },
        ...(
          [
            ["file_descriptor_response", "FileDescriptorResponse"],
            ["all_extension_numbers_response", "ExtensionNumberResponse"],
            ["list_services_response", "ListServiceResponse"],
            ["error_response", "ErrorResponse"],
          ] as const
        ).map(([name, type], i) => ({
          name,
          number: 4 + i,
          type: "TYPE_MESSAGE",
          typeName: `.grpc.reflection.v1.${type}`,
          label: "LABEL_OPTIONAL",
          oneofIndex: 0,
        })),
      ],
      oneofDecl: [{ name: "message_response" }],
    },
    {
      name: "FileDescriptorResponse",
      field: [
        { name: "file_descriptor_proto", number: 1, type: "TYPE_BYTES", label: "LABEL_REPEATED" },
      ],
    },
    {
      name: "ExtensionNumberResponse",
      field: [
        { name: "base_type_name", number: 1, type: "TYPE_STRING", label: "LABEL_OPTIONAL" },
        { name: "extension_number", number: 2, type: "TYPE_INT32", label: "LABEL_REPEATED" },
      ],
    },
    {
      name: "ListServiceResponse",
      field: [
        {
          name: "service",
          number: 1,
          type: "TYPE_MESSAGE",
          typeName: ".grpc.reflection.v1.ServiceResponse",
          label: "LABEL_REPEATED",
        },
      ],
    },
    {
      name: "ServiceResponse",
      field: [{ name: "name", number: 1, type: "TYPE_STRING", label: "LABEL_OPTIONAL" }],
    },
    {
      name: "ErrorResponse",
      field: [
        { name: "error_code", number: 1, type: "TYPE_INT32", label: "LABEL_OPTIONAL" },
        { name: "error_message", number: 2, type: "TYPE_STRING", label: "LABEL_OPTIONAL" },
      ],
    },
  ],
});
const registry = createFileRegistry(reflectionFile, () => undefined);
const RequestSchema = registry.getMessage(
  "grpc.reflection.v1.ServerReflectionRequest",
) as DescMessage;
const ResponseSchema = registry.getMessage(
  "grpc.reflection.v1.ServerReflectionResponse",
) as DescMessage;

// biome-ignore lint/suspicious/noExplicitAny: messages of a descriptor built at run time
type Any = any;

/** Sends requests on one ServerReflectionInfo stream and returns the decoded responses. */
function reflect(requests: Record<string, unknown>[], version = "v1"): Promise<Any[]> {
  const client = new grpc.Client(`127.0.0.1:${s.app.grpcPort}`, grpc.credentials.createInsecure());
  const call = client.makeBidiStreamRequest(
    `/grpc.reflection.${version}.ServerReflection/ServerReflectionInfo`,
    (m: Message) => Buffer.from(toBinary(RequestSchema, m)),
    (b: Buffer) => fromBinary(ResponseSchema, b),
  );
  const out: Any[] = [];
  return new Promise((resolve, reject) => {
    call.on("data", (m: Any) => out.push(m));
    call.on("error", reject);
    call.on("end", () => {
      client.close();
      resolve(out);
    });
    for (const r of requests) call.write(create(RequestSchema, r as Any));
    call.end();
  });
}

const ask = (q: string, value: unknown) => ({ messageRequest: { case: q, value } });

/** The names of the files in a file_descriptor_response. */
const fileNames = (res: Any): string[] =>
  res.messageResponse.value.fileDescriptorProto.map(
    (b: Uint8Array) => fromBinary(FileDescriptorProtoSchema, b).name,
  );

describe("the reflection protocol", () => {
  it("returns our descriptors byte for byte, custom options included, with every import", async () => {
    const [res] = await reflect([ask("fileByFilename", "latchkey/v2/apis.proto")]);
    expect(res.messageResponse.case).toBe("fileDescriptorResponse");
    const files: Uint8Array[] = res.messageResponse.value.fileDescriptorProto;
    expect(Buffer.from(files[0] as Uint8Array)).toEqual(
      Buffer.from(toBinary(FileDescriptorProtoSchema, file_latchkey_v2_apis.proto)),
    );
    expect(new Set(fileNames(res))).toEqual(
      new Set([
        "latchkey/v2/apis.proto",
        "latchkey/v2/common.proto",
        "latchkey/v2/keys.proto",
        "latchkey/v2/identities.proto",
        "latchkey/v2/permissions.proto",
        "latchkey/v2/options.proto",
        "google/protobuf/descriptor.proto",
        "google/protobuf/struct.proto",
        "google/protobuf/field_mask.proto",
      ]),
    );
    // A client that builds the schema from these files sees the (latchkey.v2.rules) bounds.
    const protos = files.map((b) => fromBinary(FileDescriptorProtoSchema, b));
    const ordered: FileDescriptorProto[] = [];
    const add = (p: FileDescriptorProto | undefined): void => {
      if (!p || ordered.includes(p)) return;
      for (const d of p.dependency) add(protos.find((x) => x.name === d));
      ordered.push(p);
    };
    for (const p of protos) add(p);
    const name = createFileRegistry(create(FileDescriptorSetSchema, { file: ordered }))
      .getMessage("latchkey.v2.CreateApiRequest")
      ?.fields.find((f) => f.name === "name");
    const fieldRules = getExtension(name?.proto.options as FieldOptions, rules);
    expect(fieldRules).toMatchObject({ required: true, minLen: 3, maxLen: 256 });
  });

  it("finds the file of a service, a method, a message, a field and a well-known type", async () => {
    const answers = await reflect([
      ask("fileContainingSymbol", "latchkey.v2.KeysService"),
      ask("fileContainingSymbol", "latchkey.v2.ApisService.CreateApi"),
      ask("fileContainingSymbol", "latchkey.v2.CreateApiRequest"),
      ask("fileContainingSymbol", "latchkey.v2.CreateApiRequest.name"),
      ask("fileContainingSymbol", "google.protobuf.Struct"),
    ]);
    expect(answers.map((a) => fileNames(a)[0])).toEqual([
      "latchkey/v2/keys.proto",
      "latchkey/v2/apis.proto",
      "latchkey/v2/apis.proto",
      "latchkey/v2/apis.proto",
      "google/protobuf/struct.proto",
    ]);
  });

  it("answers extension questions about our custom options", async () => {
    const [byExtension, numbers] = await reflect(
      [
        ask(
          "fileContainingExtension",
          create(
            registry.getMessage("grpc.reflection.v1.ExtensionRequest") as DescMessage,
            {
              containingType: "google.protobuf.FieldOptions",
              extensionNumber: rules.number,
            } as Any,
          ),
        ),
        ask("allExtensionNumbersOfType", "google.protobuf.FieldOptions"),
      ],
      "v1alpha",
    );
    expect(fileNames(byExtension)[0]).toBe("latchkey/v2/options.proto");
    expect(numbers.messageResponse.case).toBe("allExtensionNumbersResponse");
    expect(numbers.messageResponse.value.baseTypeName).toBe("google.protobuf.FieldOptions");
    expect(numbers.messageResponse.value.extensionNumber).toContain(rules.number);
  });

  it("echoes the host and the request, and answers NOT_FOUND in the stream", async () => {
    const request = { host: "localhost:9090", ...ask("fileContainingSymbol", "nope.Nothing") };
    const [res] = await reflect([request]);
    expect(res.validHost).toBe("localhost:9090");
    expect(res.originalRequest.messageRequest).toEqual(request.messageRequest);
    expect(res.messageResponse.case).toBe("errorResponse");
    expect(res.messageResponse.value.errorCode).toBe(grpc.status.NOT_FOUND);
  });

  it("lists only the services the port serves", async () => {
    const [res] = await reflect([ask("listServices", "*")]);
    const names = res.messageResponse.value.service.map((x: { name: string }) => x.name);
    expect(names.sort()).toEqual(SERVICES.map((x) => x.typeName).sort());
  });
});
