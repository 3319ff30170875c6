import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../../src/config/settings.js";
import { currentEngine } from "../harness/engine.js";
import { latchkey, startLatchkey } from "./bin.js";

const VERSION = JSON.parse(
  readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
).version;

// The command line is the same on both engines: these run once, on the PGlite project.
describe.skipIf(currentEngine() !== "pglite")(
  "the latchkey command line",
  { timeout: 300_000 },
  () => {
    it.each([[["--help"]], [["-h"]], [["help"]], [[]]])("%j prints the usage, exit 0", (args) => {
      const r = latchkey(args);
      expect(r.code).toBe(0);
      for (const command of ["serve", "migrate", "workspace list", "root-key create"])
        expect(r.stdout).toContain(command);
    });

    it.each([
      [["help", "root-key", "create"], "Usage: latchkey root-key create"],
      [["root-key", "create", "--help"], "Usage: latchkey root-key create"],
      [["help", "serve"], "Usage: latchkey serve"],
      [["serve", "-h"], "Usage: latchkey serve"],
      [["help", "root-key"], "latchkey root-key <create|list|revoke>"],
      [["workspace", "--help"], "latchkey workspace <create|list>"],
    ])("%j prints that command's help, exit 0", (args, usage) => {
      const r = latchkey(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(usage);
    });

    it("--version prints the package's version", () => {
      const r = latchkey(["--version"]);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(VERSION);
    });

    it.each([
      [["frobnicate"], "unknown command 'frobnicate'"],
      [["serv"], "unknown command 'serv'; did you mean serve?"],
      [["--frobnicate"], "unknown option '--frobnicate'"],
      [
        ["serve", "--prot", "1"],
        "unknown option '--prot' for 'latchkey serve'; did you mean --port?",
      ],
      [["serve", "extra"], "unexpected argument 'extra'"],
      [["root-key", "lsit"], "has no subcommand 'lsit'; did you mean list?"],
      [["root-key"], "'latchkey root-key' needs a subcommand"],
      [["root-key", "list", "--permission", "x"], "unknown option '--permission'"],
      [["root-key", "revoke", "rk_1", "rk_2"], "unexpected argument 'rk_2'"],
      [["help", "frobnicate"], "unknown command 'frobnicate'"],
      [["serve", "--port"], "--port"],
    ])("%j exits 2 with one line naming the mistake", (args, message) => {
      const r = latchkey(args);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.trimEnd().split("\n")).toEqual([expect.stringContaining(message)]);
    });

    it("serve --help lists every setting as a flag with its variable and default", () => {
      const help = latchkey(["serve", "--help"]).stdout;
      for (const s of Object.values(SETTINGS)) {
        const flag = `--${s.env.toLowerCase().replaceAll("_", "-")}`;
        const at = help.indexOf(`  ${flag} `);
        expect(at, flag).toBeGreaterThan(-1);
        const entry = help.slice(at, help.indexOf("\n  --", at + 1));
        expect(entry, flag).toContain(`[${s.env}, default ${s.shownDefault}`);
      }
    });

    it("takes every setting as a flag, and a flag beats its variable", async () => {
      const data = mkdtempSync(join(tmpdir(), "latchkey-flags-"));
      // The environment says port 1 (refused without root) and a bad level; the flags win.
      const serving = startLatchkey(
        [
          "serve",
          "--port",
          "0",
          "--grpc-port",
          "off",
          "--admin-port",
          "0",
          "--log-level",
          "info",
          "--data-dir",
          data,
        ],
        {
          PORT: "1",
          LOG_LEVEL: "nonsense",
          GRPC_PORT: "1",
          ADMIN_PORT: "1",
          HOST: "127.0.0.1",
          ROOT_KEY: "k".repeat(20),
        },
      );
      try {
        expect(await serving.listening(), serving.stderr()).toBe(true);
        expect(serving.port()).toBeGreaterThan(1);
        expect(Number(/"adminPort":(\d+)/.exec(serving.stdout())?.[1])).toBeGreaterThan(1);
        expect(serving.stdout()).toContain('"engine":"pglite"');
        expect(serving.stdout()).not.toContain('"grpcPort"');
        const res = await fetch(`http://127.0.0.1:${serving.port()}/v2/liveness.check`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        expect(res.status).toBe(200);
      } finally {
        await serving.stop();
        rmSync(data, { recursive: true, force: true });
      }
    });
  },
);
