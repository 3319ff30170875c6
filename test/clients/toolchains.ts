import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";

/**
 * The stock toolchains a team would generate a Latchkey client with: protoc and its Go and
 * Python plugins, Go against Debian's library sources in GOPATH mode (no module proxy is
 * reachable), Python with Debian's grpcio. `.ci/run` installs them; the tests skip without.
 */

const run = promisify(execFile);
export const ROOT = new URL("../..", import.meta.url).pathname;
/** Every file of the contract, relative to proto/: what a consumer hands protoc. */
const PROTO_FILES = readdirSync(join(ROOT, "proto/latchkey/v2"))
  .filter((f) => f.endsWith(".proto"))
  .map((f) => `latchkey/v2/${f}`);
/** Debian's Go library sources (golang-google-grpc-dev, golang-google-protobuf-dev, ...). */
const DEBIAN_GOPATH = "/usr/share/gocode";
/**
 * Go's build cache, kept where every test run on this machine finds it: the first build
 * compiles grpc-go from source (tens of seconds of CPU), later ones only link.
 */
const GO_CACHE = join(tmpdir(), "latchkey-test", "go-build");

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir !== "" && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** A Python 3 that imports grpc and protobuf: Debian's first (a version manager's may lack them). */
function pythonWithGrpc(): string | undefined {
  const candidates = ["/usr/bin/python3", onPath("python3")].filter((p) => p !== undefined);
  return candidates.find(
    (python) =>
      spawnSync(python, ["-c", "import grpc, google.protobuf"], { stdio: "ignore" }).status === 0,
  );
}

/** A toolchain found on this machine, or the names of what is missing. */
export type Toolchain<T> = { found: T; missing: [] } | { found: undefined; missing: string[] };

function toolchain<T>(parts: Record<string, string | undefined>, found: () => T): Toolchain<T> {
  const missing = Object.entries(parts)
    .filter(([, path]) => path === undefined)
    .map(([name]) => name);
  return missing.length === 0 ? { found: found(), missing: [] } : { found: undefined, missing };
}

export interface GoToolchain {
  protoc: string;
  go: string;
}

export interface PythonToolchain {
  protoc: string;
  python: string;
  grpcPlugin: string;
}

function inDebianGopath(path: string): string | undefined {
  return existsSync(join(DEBIAN_GOPATH, "src", path)) ? DEBIAN_GOPATH : undefined;
}

export function goToolchain(): Toolchain<GoToolchain> {
  const parts = {
    protoc: onPath("protoc"),
    "protoc-gen-go": onPath("protoc-gen-go"),
    "protoc-gen-go-grpc": onPath("protoc-gen-go-grpc"),
    go: onPath("go"),
    [`grpc-go sources in ${DEBIAN_GOPATH}`]: inDebianGopath("google.golang.org/grpc"),
    // grpc-go's codec calls github.com/golang/protobuf, which reads the generated (APIv2)
    // messages from 1.4 on; 1.3, which apt may pick for grpc-go, panics on them.
    "golang-github-golang-protobuf-1-5-dev": inDebianGopath(
      "github.com/golang/protobuf/proto/registry.go",
    ),
  };
  return toolchain(parts, () => ({ protoc: parts.protoc as string, go: parts.go as string }));
}

export function pythonToolchain(): Toolchain<PythonToolchain> {
  const parts = {
    protoc: onPath("protoc"),
    "python3 with grpc and protobuf": pythonWithGrpc(),
    grpc_python_plugin: onPath("grpc_python_plugin"),
  };
  return toolchain(parts, () => ({
    protoc: parts.protoc as string,
    python: parts["python3 with grpc and protobuf"] as string,
    grpcPlugin: parts.grpc_python_plugin as string,
  }));
}

/**
 * Generates the Go client into `dir`'s GOPATH with plain protoc (no M or module flags: the
 * files' go_package decides) and builds `test/clients/verify_key.go` against it; returns the
 * binary.
 */
export async function buildGoClient(tools: GoToolchain, dir: string): Promise<string> {
  const src = join(dir, "src");
  mkdirSync(src, { recursive: true });
  await run(
    tools.protoc,
    ["-I", "proto", `--go_out=${src}`, `--go-grpc_out=${src}`, ...PROTO_FILES],
    { cwd: ROOT },
  );
  const binary = join(dir, "verify-key");
  // -trimpath keeps this run's temporary directory out of the cache keys, so the generated
  // package compiled by an earlier run (or the other engine's pass) is reused too.
  const program = join(ROOT, "test/clients/verify_key.go");
  await run(tools.go, ["build", "-trimpath", "-o", binary, program], {
    cwd: dir,
    timeout: 600_000,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      // GOPATH mode: imports come from the generated code and Debian's sources, never a proxy.
      GO111MODULE: "off",
      GOPATH: `${dir}${delimiter}${DEBIAN_GOPATH}`,
      GOCACHE: GO_CACHE,
      GOENV: "off",
      GOFLAGS: "",
      GOPROXY: "off",
    },
  });
  return binary;
}

/**
 * google.rpc.Status, the message of the grpc-status-details-bin trailer. Python users get it
 * from googleapis-common-protos; that is not packaged for Debian, so the test generates its
 * three fields (the same numbers and types) the same way.
 */
const RPC_STATUS_PROTO = `syntax = "proto3";
package google.rpc;
import "google/protobuf/any.proto";
message Status {
  int32 code = 1;
  string message = 2;
  repeated google.protobuf.Any details = 3;
}
`;

/** Generates the Python client into `dir` with plain protoc and grpcio's plugin. */
export async function generatePythonClient(tools: PythonToolchain, dir: string): Promise<void> {
  const statusDir = join(dir, "status-proto");
  mkdirSync(join(statusDir, "google/rpc"), { recursive: true });
  writeFileSync(join(statusDir, "google/rpc/status.proto"), RPC_STATUS_PROTO);
  await run(
    tools.protoc,
    [
      "-I",
      "proto",
      `--python_out=${dir}`,
      `--grpc_out=${dir}`,
      `--plugin=protoc-gen-grpc=${tools.grpcPlugin}`,
      ...PROTO_FILES,
    ],
    { cwd: ROOT },
  );
  await run(tools.protoc, ["-I", statusDir, `--python_out=${dir}`, "google/rpc/status.proto"], {
    cwd: ROOT,
  });
}

/** Runs a client program against a server's gRPC port; returns the JSON it printed. */
export async function runClient(
  command: string,
  args: string[],
  env: { grpcAddress: string; rootKey: string; pythonPath?: string },
  // biome-ignore lint/suspicious/noExplicitAny: the programs print free-form JSON
): Promise<any> {
  const { stdout } = await run(command, args, {
    timeout: 60_000,
    env: {
      PATH: process.env.PATH ?? "",
      LATCHKEY_GRPC_ADDRESS: env.grpcAddress,
      LATCHKEY_ROOT_KEY: env.rootKey,
      ...(env.pythonPath ? { PYTHONPATH: env.pythonPath, PYTHONDONTWRITEBYTECODE: "1" } : {}),
    },
  });
  return JSON.parse(stdout.trim());
}
