// Completes package-lock.json with the platform packages npm leaves out on this machine.
//
// The registry mirror here serves only the Linux builds of platform packages (e.g.
// @biomejs/cli-darwin-x64 answers 404), so `npm install` skips those optional
// dependencies and writes no lock entry for them, and then `npm ci` refuses the lock file
// as incomplete. This adds an entry per missing optional package with its os/cpu/libc
// (read from the registry when it has the package, else from the package's name), so
// `npm ci` skips them on Linux and still installs them on their own platform.
// Run it after any dependency change: `npm install && node .ci/complete-lockfile.mjs`.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(file, "utf8"));
const packages = lock.packages;
const CPU = { armv7: "arm", arm: "arm", arm64: "arm64", x64: "x64", ia32: "ia32", ppc64: "ppc64", s390x: "s390x", riscv64: "riscv64" };

function fromRegistry(name, range) {
  try {
    const raw = execFileSync("npm", ["view", `${name}@${range}`, "--json", "version", "dist.integrity", "os", "cpu", "libc"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    const parsed = JSON.parse(raw);
    const info = Array.isArray(parsed) ? parsed.at(-1) : parsed;
    return { version: info.version, integrity: info["dist.integrity"], os: info.os, cpu: info.cpu, libc: info.libc };
  } catch {
    return undefined;
  }
}

function fromName(name, range) {
  const m = /-(android|darwin|freebsd|linux|openbsd|sunos|win32)-([a-z0-9]+)(-(musl|gnu|msvc))?$/.exec(name);
  if (!m || !CPU[m[2]] || !/^\d+\.\d+\.\d+/.test(range)) throw new Error(`cannot tell the platform of ${name}@${range}`);
  const entry = { version: range, os: [m[1]], cpu: [CPU[m[2]]] };
  if (m[4] === "musl" || m[4] === "gnu") entry.libc = [m[4] === "gnu" ? "glibc" : "musl"];
  return entry;
}

let added = 0;
for (const [path, meta] of Object.entries(packages)) {
  for (const [name, range] of Object.entries(meta.optionalDependencies ?? {})) {
    const nested = `${path ? `${path}/` : ""}node_modules/${name}`;
    if (packages[nested] || packages[`node_modules/${name}`]) continue;
    const info = fromRegistry(name, range) ?? fromName(name, range);
    const entry = { version: info.version };
    if (info.integrity) entry.integrity = info.integrity;
    if (info.cpu) entry.cpu = info.cpu;
    if (info.libc) entry.libc = info.libc;
    entry.optional = true;
    if (info.os) entry.os = info.os;
    packages[`node_modules/${name}`] = entry;
    added++;
  }
}

lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} platform package entries to package-lock.json`);
