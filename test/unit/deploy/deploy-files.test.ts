import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import {
  adminServesGet,
  assignments,
  composeDefaults,
  configVariables,
  type Doc,
  dockerfileInstructions,
  dockerIgnores,
  finalStage,
  installPaths,
  missingFromInstall,
  ROOT,
  text,
  unitSection,
  yaml,
} from "./readers.js";

// The deployment files are never run here (no container engine, no cluster, no systemd in
// CI): these checks read them. Every variable they set must be one the configuration reads,
// with a value it accepts, and every path they name must exist in the package or the repository.

const KNOWN = configVariables();

/** The variables a file sets, checked as Latchkey would at start. */
function expectSettings(settings: Record<string, string>) {
  expect(Object.keys(settings).filter((name) => !KNOWN.has(name))).toEqual([]);
  expect(() => loadConfig(settings)).not.toThrow();
}

function expectInstallPaths(source: string, prefix: string) {
  const paths = installPaths(source);
  expect(paths.length).toBeGreaterThan(0);
  for (const p of paths) {
    expect(p.prefix, `${p.prefix}/node_modules/${p.rest}`).toBe(prefix);
    expect(missingFromInstall(p.rest), p.rest).toBeUndefined();
  }
}

describe("deploy/Dockerfile", () => {
  const all = dockerfileInstructions(text("deploy/Dockerfile"));
  const image = finalStage(all);
  const of = (keyword: string) => image.filter((i) => i.keyword === keyword);

  it("runs on the official Node 24 image as a non-root user", () => {
    for (const from of all.filter((i) => i.keyword === "FROM"))
      expect(from.args).toMatch(/^node:24[-.\w]*( AS \w+)?$/);
    const user = of("USER").at(-1)?.args;
    expect(user).toBeDefined();
    expect(["root", "0"]).not.toContain(user);
  });

  it("sets only settings the configuration knows, with values it accepts", () => {
    const env = Object.assign({}, ...of("ENV").map((i) => assignments(i.args)));
    expectSettings(env);
    const exposed = of("EXPOSE").flatMap((i) => i.args.split(/\s+/));
    expect(exposed.sort()).toEqual([env.PORT, env.GRPC_PORT].sort());
  });

  it("runs the image's Node on the package's entry point, from the install in WORKDIR", () => {
    const workdir = of("WORKDIR").at(-1)?.args;
    const cmd = JSON.parse(of("CMD").at(-1)?.args ?? "[]");
    // Where the official image puts its Node: the package brings none.
    expect(cmd[0]).toBe("/usr/local/bin/node");
    expect(cmd[1]).toBe(`${workdir}/node_modules/latchkey/dist/src/cli/main.js`);
    expectInstallPaths(image.map((i) => i.args).join("\n"), workdir as string);
  });

  it("has a HEALTHCHECK on a health path of the admin port, which the image sets", () => {
    const check = of("HEALTHCHECK").at(-1)?.args ?? "";
    const env = Object.assign({}, ...of("ENV").map((i) => assignments(i.args)));
    const path = /http:\/\/127\.0\.0\.1:\$\{process\.env\.ADMIN_PORT\}(\/[\w/.-]*)/.exec(
      check,
    )?.[1];
    expect(path).toMatch(/^\/health\//);
    expect(adminServesGet(path as string)).toBe(true);
    expect(env.ADMIN_PORT).toBeDefined();
    // The check runs inside the container, where the admin port's default host answers.
    expect(loadConfig(env).adminHost).toBe("127.0.0.1");
  });

  it("copies sources that exist and that .dockerignore keeps in the context", () => {
    const ignore = text(".dockerignore");
    const copies = all.filter((i) => i.keyword === "COPY" && !i.args.startsWith("--from"));
    const sources = copies.flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources.filter((s) => s !== ".")) {
      expect(existsSync(join(ROOT, source)), source).toBe(true);
      expect(dockerIgnores(ignore, source), source).toBe(false);
    }
    // What `npm run build` and `npm pack` read inside the image, after `COPY . .`.
    for (const input of [
      "README.md",
      "src/app.ts",
      "gen/latchkey/v2/keys_pb.ts",
      "proto/latchkey/v2/keys.proto",
      "tsconfig.json",
      "tsconfig.build.json",
      "src/storage/migrations",
      "gen/openapi/latchkey.openapi.json",
    ]) {
      expect(existsSync(join(ROOT, input)), input).toBe(true);
      expect(dockerIgnores(ignore, input), input).toBe(false);
    }
    for (const left of [".git", "node_modules/x", ".env", "dist/src/app.js", "data/pg"])
      expect(dockerIgnores(ignore, left), left).toBe(true);
  });
});

describe("deploy/compose.yaml", () => {
  const compose = yaml("deploy/compose.yaml");
  const services: Record<string, Doc> = compose.services;
  const latchkeys = Object.entries(services).filter(([, s]) => s.build?.dockerfile);

  it("runs two Latchkey nodes built from deploy/Dockerfile, with PostgreSQL and Redis", () => {
    expect(latchkeys.length).toBe(2);
    for (const [, s] of latchkeys) {
      const context = join(ROOT, "deploy", s.build.context);
      expect(existsSync(join(context, s.build.dockerfile))).toBe(true);
      expect(join(context, s.build.dockerfile)).toBe(join(ROOT, "deploy/Dockerfile"));
      for (const dependency of Object.keys(s.depends_on))
        expect(services).toHaveProperty(dependency);
    }
    const hostPorts = latchkeys.flatMap(([, s]) => s.ports.map((p: string) => p.split(":")[0]));
    expect(new Set(hostPorts).size).toBe(hostPorts.length);
  });

  it("gives each node settings the configuration knows, pointing at the compose services", () => {
    for (const [, s] of latchkeys) {
      const env: Record<string, string> = {};
      for (const [name, value] of Object.entries(s.environment))
        env[name] = composeDefaults(String(value));
      expectSettings(env);
      expect(services).toHaveProperty(new URL(env.DATABASE_URL as string).hostname);
      expect(services).toHaveProperty(new URL(env.REDIS_URL as string).hostname);
    }
  });
});

describe("deploy/kubernetes", () => {
  const kustomization = yaml("deploy/kubernetes/kustomization.yaml");
  const resources: Doc[] = kustomization.resources.map((f: string) =>
    yaml(`deploy/kubernetes/${f}`),
  );
  const byKind = (kind: string) => resources.find((r) => r.kind === kind);
  const configMap = byKind("ConfigMap");
  const secret = byKind("Secret");
  const deployment = byKind("Deployment");
  const service = byKind("Service");
  const pod = deployment?.spec.template.spec;
  const container = pod?.containers[0];

  it("has a Deployment, a Service, a ConfigMap and a Secret", () => {
    for (const r of [configMap, secret, deployment, service]) expect(r).toBeDefined();
    expect(container.envFrom).toEqual([
      { configMapRef: { name: configMap.metadata.name } },
      { secretRef: { name: secret.metadata.name } },
    ]);
  });

  it("sets only settings the configuration knows, with values it accepts", () => {
    expectSettings({ ...configMap.data, ...secret.stringData });
    for (const e of container.env ?? []) expect(KNOWN.has(e.name), e.name).toBe(true);
    const ports = Object.fromEntries(
      container.ports.map((p: Doc) => [p.name, String(p.containerPort)]),
    );
    expect(ports).toEqual({
      http: configMap.data.PORT,
      grpc: configMap.data.GRPC_PORT,
      admin: configMap.data.ADMIN_PORT,
    });
  });

  it("probes the health endpoints on the admin port, which the kubelet can reach", () => {
    const probes = ["startupProbe", "livenessProbe", "readinessProbe"].map(
      (probe) => container[probe]?.httpGet,
    );
    for (const get of probes) {
      expect(get).toBeDefined();
      expect(get.port).toBe("admin");
      expect(adminServesGet(get.path), get.path).toBe(true);
    }
    expect(probes.map((get) => get.path)).toEqual([
      "/health/live",
      "/health/live",
      "/health/ready",
    ]);
    // The kubelet probes the pod's address, not its loopback.
    expect(loadConfig(configMap.data).adminHost).toBe("0.0.0.0");
    const annotations = deployment.spec.template.metadata.annotations;
    expect(annotations["prometheus.io/port"]).toBe(configMap.data.ADMIN_PORT);
    expect(adminServesGet(annotations["prometheus.io/path"])).toBe(true);
  });

  it("runs as a non-root user, and the Service reaches the pods' named ports", () => {
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.securityContext.runAsUser).not.toBe(0);
    expect(service.spec.selector).toEqual(deployment.spec.template.metadata.labels);
    expect(deployment.spec.selector.matchLabels).toEqual(deployment.spec.template.metadata.labels);
    const names = container.ports.map((p: Doc) => p.name);
    for (const port of service.spec.ports) expect(names).toContain(port.targetPort);
  });
});

describe("deploy/latchkey.service", () => {
  const source = text("deploy/latchkey.service");
  const service = unitSection(source, "Service");
  const values = (key: string) => service.filter(([k]) => k === key).map(([, v]) => v);

  it("sets only settings the configuration knows, with values it accepts", () => {
    const env = Object.assign({}, ...values("Environment").map(assignments));
    expect(Object.keys(env).length).toBeGreaterThan(0);
    expectSettings(env);
  });

  it("runs the system's Node on the package's entry point, as a non-root user", () => {
    const [node, entry, command] = (values("ExecStart").at(-1) ?? "").split(/\s+/);
    expect(node).toBe("/usr/bin/node");
    expect(entry).toBe("/opt/latchkey/node_modules/latchkey/dist/src/cli/main.js");
    expect(command).toBe("serve");
    expectInstallPaths(source, "/opt/latchkey");
    expect(["root", "0"]).not.toContain(values("User").at(-1));
  });
});
