import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pinned } from "./process.ts";

// A real nginx for the gateway test (test/server/gateway/nginx.test.ts) and the gateway
// benchmark: a child process (never a system service) with a generated configuration in a
// temporary folder, on a free port, serving a site such as the documented configuration
// docs/gateways/nginx.conf (documentedSite).

/** Debian's nginx binary, when it is installed (CI installs it; .ci/run). */
export const NGINX = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((p) => existsSync(p));

const DOCUMENTED = new URL("../../docs/gateways/nginx.conf", import.meta.url);

/** A free loopback port (free when asked: nginx binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** What the documented configuration's placeholders are replaced with. */
export interface NginxSettings {
  latchkey: string;
  upstream: string;
  apiId: string;
  rootKey: string;
}

/** The documented configuration with its placeholders replaced, listening on `listen`. */
export function documentedSite(settings: NginxSettings, listen: string): string {
  return readFileSync(DOCUMENTED, "utf8")
    .replaceAll("__LATCHKEY__", settings.latchkey)
    .replaceAll("__UPSTREAM__", settings.upstream)
    .replaceAll("__LISTEN__", listen)
    .replaceAll("__API_ID__", settings.apiId)
    .replaceAll("__ROOT_KEY__", settings.rootKey);
}

/** A running nginx. */
export interface Nginx {
  port: number;
  /** The master process (its worker is its child). */
  pid: number;
  stop(): Promise<void>;
  /** nginx's error log so far, for a failing test's message. */
  errors(): string;
}

/**
 * Starts nginx serving `site` (a server-level configuration, given the address to listen on),
 * plus what a process of its own needs: a pid file, logs and temporary files in its folder,
 * one worker, and no daemon; pinned to `cpu` when given. Resolves once it answers on its port.
 */
export async function startNginx(
  siteOf: (listen: string) => string,
  options: { cpu?: number } = {},
): Promise<Nginx> {
  if (!NGINX) throw new Error("nginx is not installed");
  const dir = mkdtempSync(join(tmpdir(), "latchkey-nginx-"));
  const port = await freePort();
  const site = siteOf(`127.0.0.1:${port}`);
  writeFileSync(join(dir, "latchkey.conf"), site);
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((t) => `    ${t}_temp_path ${join(dir, t)};`)
    .join("\n");
  writeFileSync(
    join(dir, "nginx.conf"),
    `${process.getuid?.() === 0 ? "user root;\n" : ""}worker_processes 1;
pid ${join(dir, "nginx.pid")};
error_log ${join(dir, "error.log")} warn;
events { worker_connections 512; }
http {
    access_log off;
    # nginx closes a client connection after 1000 requests by default; a request the load
    # generator sends as it closes fails (the generator does not retry). Tests and the
    # benchmark keep their connections for the whole run.
    keepalive_requests 1000000;
${temp}
    include ${join(dir, "latchkey.conf")};
}
`,
  );
  const [bin, args] = pinned(options.cpu, [
    NGINX,
    ...["-p", dir, "-c", join(dir, "nginx.conf"), "-e", join(dir, "error.log")],
    ...["-g", "daemon off;"],
  ]);
  const child: ChildProcess = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const errors = () => {
    const log = join(dir, "error.log");
    return stderr + (existsSync(log) ? readFileSync(log, "utf8") : "");
  };
  const deadline = Date.now() + 20_000;
  while (!(await answers(port))) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${errors()}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`nginx did not answer in time: ${errors()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    pid: child.pid as number,
    errors,
    async stop() {
      if (child.exitCode === null) child.kill("SIGQUIT");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether something answers HTTP on the port. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      { host: "127.0.0.1", port, path: "/_nginx_ready", method: "GET" },
      (res) => {
        res.resume();
        resolve(true);
      },
    );
    req.once("error", () => resolve(false));
    req.end();
  });
}
