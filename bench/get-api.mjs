// apis.getApi on the /v2 JSON door (autocannon) and over gRPC (h2load),
// side by side with a bare node:http server and a bare grpc-js server, on every runtime
// available (the machine's Node and Node 24 from npm). Results go to bench/results/.
//
//   BENCH_SECONDS=10   measured seconds per run (after a 2 s warm-up)
//   BENCH_PROFILE=1    also take a CPU profile of Latchkey under the JSON load
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { GetApiRequestSchema } from "../dist/gen/latchkey/v2/apis_pb.js";
import { loadGrpc, loadHttp, loadHttpNative, profileTop, runtimes, start } from "./lib.mjs";

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const profile = process.env.BENCH_PROFILE === "1";
const results = new URL("./results/", import.meta.url).pathname;
mkdirSync(results, { recursive: true });
const rootKey = "bench_root_key_0123456789abcdef";

function grpcBody(apiId) {
  const msg = toBinary(GetApiRequestSchema, create(GetApiRequestSchema, { apiId }));
  const frame = Buffer.alloc(5 + msg.length);
  frame.writeUInt32BE(msg.length, 1);
  Buffer.from(msg).copy(frame, 5);
  const file = join(tmpdir(), `latchkey-bench-${process.pid}.bin`);
  writeFileSync(file, frame);
  return file;
}
const grpcHeaders = (auth) => ({
  "content-type": "application/grpc",
  te: "trailers",
  ...(auth ? { authorization: `Bearer ${rootKey}` } : {}),
});

async function benchRuntime({ bin, version }) {
  console.log(`\n== ${version} (${bin})`);
  const out = { runtime: version };

  const bare = await start(bin, ["bench/servers/bare-http.mjs"], {}, /\{"port":(\d+)\}/);
  const bareUrl = `http://127.0.0.1:${bare.match[1]}/`;
  const bareBody = '{"apiId":"api_bench"}';
  out.bareHttp = await loadHttp({ url: bareUrl, body: bareBody, seconds });
  out.bareHttpNative = await loadHttpNative({ url: bareUrl, body: bareBody, seconds });
  await bare.stop();
  console.log(
    "bare node:http",
    out.bareHttp.rps,
    "req/s (autocannon)",
    out.bareHttpNative.rps,
    "(h2load --h1)",
  );

  const dataDir = mkdtempSync(join(tmpdir(), "latchkey-bench-"));
  const profDir = join(results, "profiles", version);
  const args = profile ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : [];
  const lk = await start(
    bin,
    [...args, "dist/src/cli/main.js", "serve"],
    {
      DATA_DIR: dataDir,
      PORT: "0",
      GRPC_PORT: "0",
      HOST: "127.0.0.1",
      ROOT_KEY: rootKey,
      LOG_LEVEL: "info",
    },
    /"port":(\d+),"grpcPort":(\d+)[^\n]*latchkey listening/,
  );
  const [, port, grpcPort] = lk.match;
  const base = `http://127.0.0.1:${port}`;
  const created = await fetch(`${base}/v2/apis.createApi`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` },
    body: JSON.stringify({ name: "bench api" }),
  }).then((r) => r.json());
  const apiId = created.data.apiId;
  const body = JSON.stringify({ apiId });

  out.jsonDoor = await loadHttp({
    url: `${base}/v2/apis.getApi`,
    body,
    headers: { authorization: `Bearer ${rootKey}` },
    seconds,
  });
  out.jsonDoorNative = await loadHttpNative({
    url: `${base}/v2/apis.getApi`,
    body,
    headers: { authorization: `Bearer ${rootKey}` },
    seconds,
  });
  if (out.jsonDoor.non2xx > 0) throw new Error(`${out.jsonDoor.non2xx} non-2xx answers`);
  console.log(
    "latchkey /v2 door",
    out.jsonDoor.rps,
    "req/s (autocannon)",
    out.jsonDoorNative.rps,
    "(h2load --h1)",
  );
  const file = grpcBody(apiId);
  out.connectGrpc = await loadGrpc({
    url: `${base}/latchkey.v2.ApisService/GetApi`,
    bodyFile: file,
    headers: grpcHeaders(true),
    seconds,
  });
  console.log("latchkey gRPC (Connect, main port)", out.connectGrpc.rps, "req/s");
  out.grpcJs = await loadGrpc({
    url: `http://127.0.0.1:${grpcPort}/latchkey.v2.ApisService/GetApi`,
    bodyFile: file,
    headers: grpcHeaders(true),
    seconds,
  });
  console.log("latchkey gRPC (grpc-js, GRPC_PORT)", out.grpcJs.rps, "req/s");
  await lk.stop();
  rmSync(dataDir, { recursive: true, force: true });
  if (profile) out.profile = profileTop(profDir);

  const bareGrpc = await start(bin, ["bench/servers/bare-grpc.mjs"], {}, /\{"port":(\d+)\}/);
  out.bareGrpc = await loadGrpc({
    url: `http://127.0.0.1:${bareGrpc.match[1]}/latchkey.v2.ApisService/GetApi`,
    bodyFile: file,
    headers: grpcHeaders(false),
    seconds,
  });
  await bareGrpc.stop();
  console.log("bare grpc-js        ", out.bareGrpc.rps, "req/s");
  rmSync(file, { force: true });

  out.ratios = {
    jsonDoorOfBareHttp: round(out.jsonDoor.rps / out.bareHttp.rps),
    jsonDoorOfBareHttpNative: round(out.jsonDoorNative.rps / out.bareHttpNative.rps),
    connectGrpcOfBareGrpc: round(out.connectGrpc.rps / out.bareGrpc.rps),
    grpcJsOfBareGrpc: round(out.grpcJs.rps / out.bareGrpc.rps),
  };
  console.log("ratios", out.ratios);
  return out;
}

const round = (x) => Math.round(x * 100) / 100;

const report = {
  benchmark: "apis.getApi",
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model },
  runs: [],
};
for (const rt of await Promise.all(
  runtimes().map(async (r) => ({ bin: r.bin, version: await r.version })),
)) {
  report.runs.push(await benchRuntime(rt));
}
const name = `get-api-${report.date.slice(0, 19).replace(/[:T]/g, "-")}.json`;
writeFileSync(join(results, name), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(results, "get-api-latest.json"), `${JSON.stringify(report, null, 2)}\n`);
console.log(`\nwrote bench/results/${name}`);
