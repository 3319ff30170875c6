#!/usr/bin/env node
// Mutation check of the authorization layer. It finds every authorization check in the code,
// removes one at a time and runs the tests that should notice; a check whose removal no test
// notices (a surviving mutant) is a check without a test, and the script exits 1.
//
// The checks, found anew on every run:
// - each permission template of each rpc's (latchkey.v2.procedure) option (removed);
// - each conditional case (`when`) there (made to demand nothing beyond the procedure's
//   first permission);
// - each call to authorize( in src/services/** (replaced by `void 0`).
// The options are mutated where the server reads them: in the descriptor that
// gen/latchkey/v2/<file>_pb.ts embeds (base64 of the FileDescriptorProto), decoded, changed
// and encoded again. Editing the .proto and running `buf generate` per mutant would do the
// same at about 3 s a mutant (some 80 of them); this takes milliseconds.
// Each mutant runs on PGlite only, in a temporary copy of the repository (the working tree is
// never edited), two copies at once, each with one long-lived Vitest instance (global setup
// once). The tests run: test/security/*.test.ts and the procedure's own tests
// (test/procedures/<namespace>/<procedure-kebab>.test.ts or the folder of that name, and the
// namespace's other test files that call it), the security tests filtered to those whose
// names mention it, stopping at the first failure.
//
// Usage: npm run mutation:auth -- [--workers 2] [--only <substring of a mutant name>] [--list]
import { spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import {
  createFileRegistry,
  fromBinary,
  getExtension,
  hasExtension,
  setExtension,
  toBinary,
} from "@bufbuild/protobuf";
import { base64Decode, base64Encode } from "@bufbuild/protobuf/wire";
import { FileDescriptorProtoSchema, file_google_protobuf_descriptor } from "@bufbuild/protobuf/wkt";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
/** The generated files whose embedded descriptors hold the rpcs and their options. */
const GEN = "gen/latchkey/v2";
/** The file written to catch these mutants: run on its own first. */
const FIRST = "test/security/permission-checks.test.ts";
// bench/lib: vitest.config.ts reads whether nginx is installed from bench/lib/nginx.ts.
const COPIED = [
  "src",
  "test",
  "gen",
  "bench/lib",
  "package.json",
  "tsconfig.json",
  "vitest.config.ts",
];

/** Every file under `dir` (relative to the root) whose name ends with `suffix`. */
function filesUnder(dir, suffix) {
  if (!existsSync(join(ROOT, dir))) return [];
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(suffix))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .sort();
}

/** The index just past the bracket closing the one at `open`, skipping strings and comments. */
function closing(text, open) {
  const pairs = { "{": "}", "[": "]", "(": ")" };
  const stack = [];
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'" || c === "`") {
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === "\\") i++;
    } else if (c === "/" && text[i + 1] === "/") i = text.indexOf("\n", i);
    else if (c === "/" && text[i + 1] === "*") i = text.indexOf("*/", i) + 1;
    else if (pairs[c]) stack.push(pairs[c]);
    else if (c === stack.at(-1)) {
      stack.pop();
      if (stack.length === 0) return i + 1;
    }
  }
  throw new Error(`unbalanced bracket at ${open}`);
}

/** Replaces [start, end) of `text`, eating a following comma when `replacement` is empty. */
function splice(text, start, end, replacement) {
  let stop = end;
  if (replacement === "") stop = end + (text.slice(end).match(/^\s*,/)?.[0].length ?? 0);
  return text.slice(0, start) + replacement + text.slice(stop);
}

/** The embedded descriptor of a generated file: its span in the text and the decoded proto. */
function embedded(file) {
  const text = readFileSync(join(ROOT, file), "utf8");
  const m = /fileDesc\("([A-Za-z0-9+/=]+)"/.exec(text);
  if (!m) return null;
  // The string literal, quotes included.
  const start = m.index + "fileDesc(".length;
  const proto = fromBinary(FileDescriptorProtoSchema, base64Decode(m[1]));
  return { file, text, start, end: start + m[1].length + 2, proto };
}

/** The (latchkey.v2.procedure) extension, from the descriptor gen/ embeds of options.proto. */
function procedureExtension() {
  const options = embedded(`${GEN}/options_pb.ts`).proto;
  options.dependency = ["google/protobuf/descriptor.proto"];
  const registry = createFileRegistry(options, (name) =>
    name === "google/protobuf/descriptor.proto" ? file_google_protobuf_descriptor : undefined,
  );
  return registry.getExtension("latchkey.v2.procedure");
}

/** The /v2 name of an rpc: `ApisService`, `CreateApi` → `apis.createApi`. */
function procedureName(service, method) {
  const lower = (s) => s.charAt(0).toLowerCase() + s.slice(1);
  return `${lower(service.replace(/Service$/, ""))}.${lower(method)}`;
}

/** Every rpc of the generated files: its name, its option and a writer of a changed option. */
function rpcs() {
  const ext = procedureExtension();
  const out = [];
  for (const file of filesUnder(GEN, "_pb.ts")) {
    const desc = embedded(file);
    for (const service of desc?.proto.service ?? []) {
      for (const method of service.method) {
        if (!method.options || !hasExtension(method.options, ext)) continue;
        const option = getExtension(method.options, ext);
        const write = (changed) => {
          setExtension(method.options, ext, changed);
          const b64 = base64Encode(toBinary(FileDescriptorProtoSchema, desc.proto));
          setExtension(method.options, ext, option);
          return `${desc.text.slice(0, desc.start)}"${b64}"${desc.text.slice(desc.end)}`;
        };
        out.push({ name: procedureName(service.name, method.name), file, option, write });
      }
    }
  }
  return out;
}

/** Mutants of the procedure options: each template removed, each `when` case emptied. */
function optionMutants(all) {
  const out = [];
  for (const { name, file, option, write } of all) {
    const mutant = (what, changed) => ({
      name: `${name}: ${what}`,
      file,
      mutated: write(changed),
      procedures: [name],
    });
    for (const t of option.permissions) {
      const permissions = option.permissions.filter((p) => p !== t);
      out.push(mutant(`permission ${t}`, { ...option, permissions }));
    }
    const stand = option.permissions[0];
    for (const c of option.when) {
      // Without a base permission there is nothing weaker to demand: the case goes.
      const when = stand
        ? option.when.map((w) => (w === c ? { ...w, permission: stand } : w))
        : option.when.filter((w) => w !== c);
      out.push(mutant(`when ${c.case} "${c.permission}"`, { ...option, when }));
    }
  }
  return out;
}

/** The procedures a service file serves, from its namespace's index.ts (none for helpers). */
function proceduresOfFile(file, known) {
  const dir = file.slice(0, file.lastIndexOf("/"));
  const ns = dir.slice(dir.lastIndexOf("/") + 1);
  const base = file.slice(file.lastIndexOf("/") + 1).replace(/\.ts$/, "");
  let index = "";
  try {
    index = readFileSync(join(ROOT, dir, "index.ts"), "utf8");
  } catch {}
  const imported = new RegExp(`import \\{([^}]*)\\} from "\\./${base}\\.js"`).exec(index);
  const fns = imported ? imported[1].split(",").map((s) => s.trim()) : [];
  const served = [...index.matchAll(/(\w+): \([^)]*\) =>\s*(\w+)\(/g)]
    .filter((m) => fns.includes(m[2]))
    .map((m) => `${ns}.${m[1]}`)
    .filter((p) => known.includes(p));
  // A helper (no handler of its own): every procedure of the namespace may reach it.
  return served.length > 0 ? served : known.filter((p) => p.startsWith(`${ns}.`));
}

/** Mutants of the services: each authorize( call replaced by `void 0`. */
function callMutants(known) {
  const out = [];
  for (const file of filesUnder("src/services", ".ts")) {
    const text = readFileSync(join(ROOT, file), "utf8");
    for (const m of text.matchAll(/(?<![\w.])authorize\(/g)) {
      if (/function\s+$/.test(text.slice(Math.max(0, m.index - 20), m.index))) continue;
      const end = closing(text, m.index + m[0].length - 1);
      const line = text.slice(0, m.index).split("\n").length;
      out.push({
        name: `${file}:${line} ${text.slice(m.index, end).replace(/\s+/g, " ")}`,
        file,
        mutated: splice(text, m.index, end, "void 0"),
        procedures: proceduresOfFile(file, known),
      });
    }
  }
  return out;
}

/**
 * The test files for a mutant: the security tests and its procedures' tests: the procedure's
 * own file or folder, and the namespace's other test files that call it (by name, or through
 * the typed client: `.<namespace>.<procedure>(`).
 */
function testFiles(procedures, procedureTests) {
  const named = procedureTests.filter((f) =>
    procedures.some((p) => {
      const [ns, procedure] = p.split(".");
      const own = `test/procedures/${ns}/${procedure.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      if (f.file === `${own}.test.ts` || f.file.startsWith(`${own}/`)) return true;
      return (
        f.file.startsWith(`test/procedures/${ns}/`) &&
        (f.text.includes(`"${p}"`) || f.text.includes(`.${ns}.${procedure}(`))
      );
    }),
  );
  return [...filesUnder("test/security", ".test.ts"), ...named.map((f) => f.file)];
}

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A temporary copy of the repository that Vitest can run. */
function copyRepo() {
  const dir = mkdtempSync(join(tmpdir(), "latchkey-mutation-"));
  for (const p of COPIED) cpSync(join(ROOT, p), join(dir, p), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

/** Runs `files` (security tests named by `pattern`); caught when a test failed or an error escaped. */
async function runStage(vitest, dir, files, pattern) {
  const project = vitest.getProjectByName("pglite");
  // The security suites cover every procedure: only their tests naming the mutated ones run.
  // A procedure's own files are about it: they run whole.
  const specs = files.map((f) =>
    project.createSpecification(
      join(dir, f),
      f.startsWith("test/security/") ? { testNamePattern: pattern } : {},
    ),
  );
  const result = await vitest.runTestSpecifications(specs);
  const failed = result.testModules.filter((m) => m.state() === "failed").length;
  const ran = result.testModules.reduce(
    (n, m) => n + [...m.children.allTests()].filter((t) => t.result().state !== "skipped").length,
    0,
  );
  return { caught: failed > 0 || result.unhandledErrors.length > 0, ran };
}

/** Worker: runs its mutants in its own copy with one Vitest; prints one JSON line each. */
async function worker(jobsPath) {
  const jobs = JSON.parse(readFileSync(jobsPath, "utf8"));
  const dir = copyRepo();
  // An interrupted run leaves no copy behind either.
  for (const signal of ["SIGINT", "SIGTERM"])
    process.on(signal, () => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(1);
    });
  const { createVitest } = await import("vitest/node");
  const vitest = await createVitest("test", {
    root: dir,
    config: join(dir, "vitest.config.ts"),
    project: ["pglite"],
    watch: false,
    bail: 1,
    reporters: [{}],
  });
  try {
    for (const job of jobs) {
      const path = join(dir, job.file);
      const original = readFileSync(path, "utf8");
      writeFileSync(path, job.mutated);
      vitest.invalidateFile(path);
      const started = Date.now();
      try {
        const pattern = new RegExp(job.procedures.map(escapeRegExp).join("|"));
        // The focused file first: most mutants fail it within seconds, the rest run after.
        const stages = [job.files.filter((f) => f === FIRST), job.files.filter((f) => f !== FIRST)];
        let caught = false;
        let ran = 0;
        for (const files of stages.filter((f) => f.length > 0)) {
          const stage = await runStage(vitest, dir, files, pattern);
          ran += stage.ran;
          caught = stage.caught;
          if (caught) break;
        }
        console.log(JSON.stringify({ name: job.name, caught, ran, ms: Date.now() - started }));
      } finally {
        writeFileSync(path, original);
        vitest.invalidateFile(path);
      }
    }
  } finally {
    await vitest.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs a worker process over `jobs`; resolves with its results. */
function runWorker(jobs, i) {
  const jobsPath = join(tmpdir(), `latchkey-mutation-jobs-${process.pid}-${i}.json`);
  writeFileSync(jobsPath, JSON.stringify(jobs));
  // A fresh module graph per test file: a worker that kept one across runs would still hold
  // the source as it was before the mutant was written (vitest.config.ts).
  const env = {
    ...process.env,
    TEST_DATABASE_URL: "",
    TEST_REDIS_URL: "",
    LATCHKEY_TEST_ISOLATE: "1",
  };
  delete env.TEST_DATABASE_URL;
  delete env.TEST_REDIS_URL;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [import.meta.filename, "--worker", jobsPath], {
      env,
      stdio: ["ignore", "pipe", "inherit"],
    });
    const results = [];
    let buffer = "";
    child.stdout.on("data", (chunk) => {
      buffer += chunk;
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (!line.startsWith('{"name"')) continue;
        const r = JSON.parse(line);
        results.push(r);
        console.log(`${r.caught ? "caught  " : "SURVIVED"} ${r.name} (${r.ran} tests, ${r.ms} ms)`);
      }
    });
    child.on("exit", (code) => {
      rmSync(jobsPath, { force: true });
      if (results.length === jobs.length) resolve(results);
      else
        reject(new Error(`worker ${i} exited with ${code} after ${results.length}/${jobs.length}`));
    });
  });
}

async function main(args) {
  const workers = Number(args[args.indexOf("--workers") + 1]) || 2;
  const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : "";
  const all = rpcs();
  const known = all.map((r) => r.name);
  const procedureTests = filesUnder("test/procedures", ".test.ts").map((file) => ({
    file,
    text: readFileSync(join(ROOT, file), "utf8"),
  }));
  const calls = callMutants(known);
  // A procedure that never calls authorize( checks its permissions in code of its own: its
  // option is documentation there, and removing from it would change nothing.
  const enforced = new Set(calls.flatMap((c) => c.procedures));
  const unchecked = known.filter((p) => !enforced.has(p) && p !== "liveness.check");
  if (unchecked.length > 0)
    console.log(`checked by their own code, not through the table: ${unchecked.join(", ")}`);
  const table = optionMutants(all).filter((m) => enforced.has(m.procedures[0]));
  const mutants = [...table, ...calls]
    .filter((m) => m.name.includes(only))
    .map((m) => ({ ...m, files: testFiles(m.procedures, procedureTests) }));
  if (args.includes("--list")) {
    for (const m of mutants)
      console.log(`${m.name}\n    ${m.procedures.join(" ")}\n    ${m.files.join(" ")}`);
    return;
  }
  console.log(`${mutants.length} mutants of the authorization checks, ${workers} at a time`);
  const started = Date.now();
  const shares = Array.from({ length: workers }, (_, i) =>
    mutants.filter((_, j) => j % workers === i),
  );
  const results = (await Promise.all(shares.map((s, i) => runWorker(s, i)))).flat();
  const width = Math.max(...results.map((r) => r.name.length));
  console.log(`\n${"mutant".padEnd(width)}  caught`);
  for (const r of results) console.log(`${r.name.padEnd(width)}  ${r.caught ? "yes" : "NO"}`);
  const survivors = results.filter((r) => !r.caught);
  console.log(
    `\n${results.length - survivors.length}/${results.length} caught in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  if (survivors.length > 0) {
    console.error(
      `${survivors.length} authorization check(s) no test notices: add a test for each`,
    );
    process.exit(1);
  }
}

if (process.argv[2] === "--worker") await worker(process.argv[3]);
else await main(process.argv.slice(2));
