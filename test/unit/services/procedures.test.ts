import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { create, createFileRegistry, type DescService, getOption } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { KeysService } from "../../../gen/latchkey/v2/keys_pb.js";
import { LivenessService } from "../../../gen/latchkey/v2/liveness_pb.js";
import { AuthSchema, procedure as procedureOption } from "../../../gen/latchkey/v2/options_pb.js";
import { catalog } from "../../../src/errors/catalog.js";
import type { Deps } from "../../../src/services/deps.js";
import { createServices } from "../../../src/services/index.js";
import {
  PERMISSION_CASES,
  type ProcedureOptionValue,
  procedureFromOption,
} from "../../../src/services/procedure-shape.js";
import { procedureOf, procedures, SERVED_SERVICES } from "../../../src/services/procedures.js";
import { checkImplementation } from "../../../src/services/serve.js";

const METHODS = SERVED_SERVICES.flatMap((s) => s.methods);
const handler = () => ({});

/** A handler for every rpc of `service`, but those named in `without`. */
function handlers(service: DescService, without: string[] = []): Record<string, unknown> {
  return Object.fromEntries(
    service.methods
      .filter((m) => !without.includes(m.localName))
      .map((m) => [m.localName, handler]),
  );
}

/** A service whose one rpc carries no procedure option. */
function bareService(): DescService {
  const file = create(FileDescriptorProtoSchema, {
    name: "bare.proto",
    package: "bare",
    syntax: "proto3",
    messageType: [{ name: "Empty" }],
    service: [
      {
        name: "BareService",
        method: [{ name: "Do", inputType: ".bare.Empty", outputType: ".bare.Empty" }],
      },
    ],
  });
  return createFileRegistry(file, () => undefined).getService("bare.BareService") as DescService;
}

describe("the procedure table is the rpcs' procedure options", () => {
  it("holds every rpc of every served service, each with its authentication", () => {
    const names = METHODS.map((m) => procedureOf(m).name);
    expect(names.length).toBeGreaterThanOrEqual(40);
    expect(Object.keys(procedures).sort()).toEqual([...names].sort());
    for (const m of METHODS)
      expect(["none", "required", "optional"]).toContain(procedureOf(m).procedure.auth);
  });

  it("the server serves exactly the services of the table", () => {
    const served = createServices({} as Deps).map((s) => s.service.typeName);
    expect(served).toEqual(SERVED_SERVICES.map((s) => s.typeName));
  });

  it("declares every case name the procedures' code passes, and no other", () => {
    const declared = new Set(Object.values(procedures).flatMap((p) => Object.keys(p.when ?? {})));
    expect([...declared].sort()).toEqual([...PERMISSION_CASES].sort());
  });
});

describe("the server refuses to start on a gap between the contract and the code", () => {
  it("an rpc without a handler, naming the rpc", () => {
    expect(() => checkImplementation(KeysService, handlers(KeysService, ["createKey"]))).toThrow(
      "rpc latchkey.v2.KeysService.CreateKey has no implementation",
    );
  });

  it("a handler that no rpc declares, naming it", () => {
    const impl = { ...handlers(LivenessService), retired: handler };
    expect(() => checkImplementation(LivenessService, impl)).toThrow(
      "latchkey.v2.LivenessService implements retired, which no rpc declares",
    );
  });

  it("an rpc without the procedure option, naming the procedure", () => {
    const service = bareService();
    expect(() => checkImplementation(service, handlers(service))).toThrow(
      "procedure bare.do: its rpc has no (latchkey.v2.procedure) option",
    );
  });

  it("every served service as it is", () => {
    for (const s of SERVED_SERVICES)
      expect(() => checkImplementation(s, handlers(s))).not.toThrow();
  });
});

describe("a malformed procedure option is refused, naming the procedure", () => {
  const good: ProcedureOptionValue = {
    auth: 2,
    permissions: ["api.{apiId}.read_api"],
    when: [{ case: "addRoles", permission: "rbac.*.add_role_to_key", condition: "roles is given" }],
    auditEvents: ["api.create"],
    errors: [],
  };
  const refused = (option: Partial<ProcedureOptionValue>) => () =>
    procedureFromOption("apis.x", { ...good, ...option }, AuthSchema);

  it("accepts a well-formed one", () => {
    expect(refused({})()).toEqual({
      auth: "required",
      permission: "api.{apiId}.read_api",
      when: { addRoles: "rbac.*.add_role_to_key" },
      auditEvents: ["api.create"],
    });
  });

  it.each([
    ["no auth", { auth: 0 }, "sets no auth"],
    [
      "a permission not resource.id.action",
      { permissions: ["api.read_api"] },
      "is not resource.id.action",
    ],
    [
      "an unknown case",
      { when: [{ ...good.when[0], case: "addRole" } as never] },
      "is no known case",
    ],
    ["a case twice", { when: [good.when[0], good.when[0]] as never }, "is given twice"],
    [
      "a case without its condition",
      { when: [{ ...good.when[0], condition: " " } as never] },
      "has no condition",
    ],
    ["an audit event not resource.action", { auditEvents: ["create"] }, "is not resource.action"],
  ])("%s", (_, option, message) => {
    expect(refused(option as Partial<ProcedureOptionValue>)).toThrow(/^procedure apis\.x: .*/);
    expect(refused(option as Partial<ProcedureOptionValue>)).toThrow(message);
  });
});

/** The audit events the services' code writes: event literals of the files that audit. */
function eventsWritten(): Set<string> {
  const root = new URL("../../../src/services/", import.meta.url).pathname;
  const events = new Set<string>();
  for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || !e.name.endsWith(".ts")) continue;
    const text = readFileSync(join(e.parentPath, e.name), "utf8");
    if (!/\baudit(Links)?\(/.test(text)) continue;
    for (const m of text.matchAll(/"([a-zA-Z]+\.[a-z_]+)"/g)) events.add(m[1] as string);
  }
  return events;
}

describe("audit events of the procedure options", () => {
  const written = eventsWritten();
  const MUTATING = /^(create|update|delete|set|add|remove|reroll|migrate|rotate|redeliver)/;

  it("finds the events the code writes", () => {
    expect(written).toContain("key.create");
    expect(written).toContain("authorization.connect_role_and_key");
  });

  it.each(Object.keys(procedures))("%s names only events the code writes", (name) => {
    for (const event of procedures[name as keyof typeof procedures].auditEvents) {
      expect(written, event).toContain(event);
    }
  });

  it.each(Object.keys(procedures))(
    "%s names its own event exactly when it changes something",
    (name) => {
      const events = procedures[name as keyof typeof procedures].auditEvents;
      const verb = name.slice(name.indexOf(".") + 1);
      expect(events.length > 0, `${name}: ${events.join(", ")}`).toBe(MUTATING.test(verb));
    },
  );
});

describe("the errors a procedure option lists", () => {
  it("are entries of the error catalog, each listed once", () => {
    for (const m of SERVED_SERVICES.flatMap((s) => s.methods)) {
      const { name } = procedureOf(m);
      const listed = getOption(m, procedureOption).errors;
      for (const e of listed) expect(Object.keys(catalog), `${name}: ${e}`).toContain(e);
      expect(new Set(listed).size, name).toBe(listed.length);
    }
  });
});
