import { type DescFile, type DescService, toBinary } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import type { GrpcRoute } from "./grpc-routes.js";

/**
 * gRPC server reflection (https://github.com/grpc/grpc/blob/master/doc/server-reflection.md)
 * for the Latchkey services, answered from the protobuf-es descriptors compiled into `gen/`:
 * the FileDescriptorProtos a client receives are those descriptors serialized as they are,
 * custom options such as `(latchkey.v2.rules)` included, and no .proto file is read at run
 * time. grpc.reflection.v1 and v1alpha have the same messages; both are served.
 *
 * The messages of the protocol are small, so they are read and written here with the wire
 * primitives of @bufbuild/protobuf instead of generated code.
 */

/** The files that declare these services and every file they import, dependencies first. */
export function contractFiles(services: readonly DescService[]): DescFile[] {
  const seen = new Set<string>();
  const out: DescFile[] = [];
  const visit = (file: DescFile): void => {
    if (seen.has(file.proto.name)) return;
    seen.add(file.proto.name);
    for (const dep of file.dependencies) visit(dep);
    out.push(file);
  };
  for (const s of services) visit(s.file);
  return out;
}

/** A ServerReflectionRequest: its host and which question it asks. */
export interface ReflectionRequest {
  host: string;
  question:
    | {
        kind: "fileByFilename" | "fileContainingSymbol" | "allExtensionNumbersOfType";
        name: string;
      }
    | { kind: "fileContainingExtension"; containingType: string; extensionNumber: number }
    | { kind: "listServices" }
    | { kind: "none" };
}

/** A ServerReflectionResponse, before encoding. */
export type ReflectionAnswer =
  | { kind: "files"; files: Uint8Array[] }
  | { kind: "extensionNumbers"; baseTypeName: string; numbers: number[] }
  | { kind: "services"; names: string[] }
  | { kind: "error"; code: Code; message: string };

const LEN = WireType.LengthDelimited;

function readExtensionRequest(bytes: Uint8Array): ReflectionRequest["question"] {
  const r = new BinaryReader(bytes);
  let containingType = "";
  let extensionNumber = 0;
  while (r.pos < r.len) {
    const [no, type] = r.tag();
    if (no === 1 && type === LEN) containingType = r.string();
    else if (no === 2 && type === WireType.Varint) extensionNumber = r.int32();
    else r.skip(type, no);
  }
  return { kind: "fileContainingExtension", containingType, extensionNumber };
}

/** Decodes a ServerReflectionRequest (the same in v1 and v1alpha); throws on malformed input. */
export function decodeRequest(bytes: Uint8Array): ReflectionRequest {
  const r = new BinaryReader(bytes);
  const req: ReflectionRequest = { host: "", question: { kind: "none" } };
  while (r.pos < r.len) {
    const [no, type] = r.tag();
    if (type !== LEN) {
      r.skip(type, no);
      continue;
    }
    switch (no) {
      case 1:
        req.host = r.string();
        break;
      case 3:
        req.question = { kind: "fileByFilename", name: r.string() };
        break;
      case 4:
        req.question = { kind: "fileContainingSymbol", name: r.string() };
        break;
      case 5:
        req.question = readExtensionRequest(r.bytes());
        break;
      case 6:
        req.question = { kind: "allExtensionNumbersOfType", name: r.string() };
        break;
      case 7:
        r.string();
        req.question = { kind: "listServices" };
        break;
      default:
        r.skip(type, no);
    }
  }
  return req;
}

/** Encodes a ServerReflectionResponse; `original` is the request's bytes, echoed as they came. */
export function encodeResponse(
  host: string,
  original: Uint8Array | undefined,
  answer: ReflectionAnswer,
): Uint8Array {
  const w = new BinaryWriter();
  if (host !== "") w.tag(1, LEN).string(host);
  if (original) w.tag(2, LEN).bytes(original);
  switch (answer.kind) {
    case "files":
      w.tag(4, LEN).fork();
      for (const f of answer.files) w.tag(1, LEN).bytes(f);
      w.join();
      break;
    case "extensionNumbers":
      w.tag(5, LEN).fork().tag(1, LEN).string(answer.baseTypeName);
      for (const n of answer.numbers) w.tag(2, WireType.Varint).int32(n);
      w.join();
      break;
    case "services":
      w.tag(6, LEN).fork();
      for (const name of answer.names) w.tag(1, LEN).fork().tag(1, LEN).string(name).join();
      w.join();
      break;
    case "error":
      w.tag(7, LEN).fork().tag(1, WireType.Varint).int32(answer.code);
      w.tag(2, LEN).string(answer.message).join();
      break;
  }
  return w.finish();
}

/** Answers reflection questions about the files of a set of services. */
export class ReflectionIndex {
  private readonly files = new Map<string, DescFile>();
  private readonly encoded = new Map<string, Uint8Array>();
  private readonly symbols = new Map<string, DescFile>();
  private readonly messages = new Set<string>();
  /** Extendee type name -> extension number -> the file declaring the extension. */
  private readonly extensions = new Map<string, Map<number, DescFile>>();
  private readonly services: string[];

  constructor(services: readonly DescService[]) {
    this.services = services.map((s) => s.typeName);
    for (const file of contractFiles(services)) {
      this.files.set(file.proto.name, file);
      this.encoded.set(file.proto.name, toBinary(FileDescriptorProtoSchema, file.proto));
      for (const type of nestedTypes(file)) {
        this.symbols.set(type.typeName, file);
        switch (type.kind) {
          case "message":
            this.messages.add(type.typeName);
            for (const f of type.fields) this.symbols.set(`${type.typeName}.${f.name}`, file);
            for (const o of type.oneofs) this.symbols.set(`${type.typeName}.${o.name}`, file);
            break;
          case "enum": {
            // Enum values are scoped like siblings of their enum.
            const scope = type.typeName.slice(0, type.typeName.lastIndexOf(".") + 1);
            for (const v of type.values) this.symbols.set(`${scope}${v.name}`, file);
            break;
          }
          case "service":
            for (const m of type.methods) this.symbols.set(`${type.typeName}.${m.name}`, file);
            break;
          case "extension": {
            const byNumber = this.extensions.get(type.extendee.typeName) ?? new Map();
            byNumber.set(type.number, file);
            this.extensions.set(type.extendee.typeName, byNumber);
            break;
          }
        }
      }
    }
  }

  /** The answer to one request. */
  answer(q: ReflectionRequest["question"]): ReflectionAnswer {
    switch (q.kind) {
      case "listServices":
        return { kind: "services", names: this.services };
      case "fileByFilename":
        return this.withDependencies(this.files.get(q.name), `file not found: ${q.name}`);
      case "fileContainingSymbol":
        return this.withDependencies(this.symbols.get(q.name), `symbol not found: ${q.name}`);
      case "fileContainingExtension":
        return this.withDependencies(
          this.extensions.get(q.containingType)?.get(q.extensionNumber),
          `extension ${q.extensionNumber} of ${q.containingType} not found`,
        );
      case "allExtensionNumbersOfType": {
        if (!this.messages.has(q.name)) return notFound(`message type not found: ${q.name}`);
        const numbers = [...(this.extensions.get(q.name)?.keys() ?? [])].sort((a, b) => a - b);
        return { kind: "extensionNumbers", baseTypeName: q.name, numbers };
      }
      case "none":
        return {
          kind: "error",
          code: Code.InvalidArgument,
          message: "the request asks nothing this server knows",
        };
    }
  }

  /** The file first, then every file it imports, transitively (each once). */
  private withDependencies(file: DescFile | undefined, missing: string): ReflectionAnswer {
    if (!file) return notFound(missing);
    const names = [file.proto.name];
    const queue = [...file.dependencies];
    for (let dep = queue.shift(); dep; dep = queue.shift()) {
      if (names.includes(dep.proto.name)) continue;
      names.push(dep.proto.name);
      queue.push(...dep.dependencies);
    }
    return { kind: "files", files: names.map((n) => this.encoded.get(n) as Uint8Array) };
  }
}

function notFound(message: string): ReflectionAnswer {
  return { kind: "error", code: Code.NotFound, message };
}

/** One request of the stream in, one response out; a malformed request gets an error response. */
export function respond(index: ReflectionIndex, bytes: Uint8Array): Uint8Array {
  let req: ReflectionRequest;
  try {
    req = decodeRequest(bytes);
  } catch {
    return encodeResponse("", undefined, {
      kind: "error",
      code: Code.InvalidArgument,
      message: "malformed ServerReflectionRequest",
    });
  }
  return encodeResponse(req.host, bytes, index.answer(req.question));
}

/**
 * The routes of grpc.reflection.v1 and v1alpha ServerReflection, describing these services:
 * each request of the stream answered in turn, the stream ended when the caller ends its side.
 * Reflection reveals only the public contract and needs no key: it does not pass through the
 * interceptors of the Latchkey services.
 */
export function reflectionRoutes(services: readonly DescService[]): [string, GrpcRoute][] {
  const index = new ReflectionIndex(services);
  const route: GrpcRoute = {
    kind: "stream",
    open: (call) => ({
      message: (req) => call.write(respond(index, req)),
      end: () => call.end({ "grpc-status": "0" }),
    }),
  };
  return ["v1", "v1alpha"].map((version) => [
    `/grpc.reflection.${version}.ServerReflection/ServerReflectionInfo`,
    route,
  ]);
}
