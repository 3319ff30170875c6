#!/usr/bin/env node
// A protoc plugin, run by `buf generate` (buf.gen.yaml): writes the OpenAPI 3.1 document
// of the /v2 JSON door. Node runs this TypeScript as is (type stripping), so it and what
// it imports use only erasable syntax, with `.ts` in relative imports.
import { create, createFileRegistry, type DescFile } from "@bufbuild/protobuf";
import {
  CodeGeneratorResponse_Feature,
  CodeGeneratorResponseSchema,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import { type Plugin, runNodeJs } from "@bufbuild/protoplugin";
import { buildDocument } from "./openapi/document.ts";

/** Where the document goes, under the plugin's `out`. */
const OUTPUT = "latchkey.openapi.json";

const plugin: Plugin = {
  name: "protoc-gen-openapi",
  version: "v1",
  run(request) {
    // Our options are read through the extensions found in the request itself.
    const registry = createFileRegistry(
      create(FileDescriptorSetSchema, { file: request.protoFile }),
    );
    // The /v2 door serves latchkey.v2 only: the foreign protos beside it (Envoy's
    // authorization service, on the gRPC port) have no JSON form.
    const files = request.fileToGenerate
      .map((name): DescFile => {
        const file = registry.getFile(name);
        if (!file) throw new Error(`${name} is not in the request`);
        return file;
      })
      .filter((file) => file.proto.package === "latchkey.v2");
    const document = buildDocument(registry, files);
    return create(CodeGeneratorResponseSchema, {
      supportedFeatures: BigInt(CodeGeneratorResponse_Feature.PROTO3_OPTIONAL),
      file: [{ name: OUTPUT, content: `${JSON.stringify(document, null, 2)}\n` }],
    });
  },
};

runNodeJs(plugin);
