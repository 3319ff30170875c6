import { describe, expect, it } from "vitest";
import { expireConsoleSessions } from "../../src/analytics/retention.js";
import { compileCidrs } from "../../src/domain/networks.js";
import { useServer } from "../harness/server.js";
import { consoleCall, json, type SignInResult, sessionRows, signIn } from "./helpers.js";

const IDLE_S = 600;
const MAX_S = 3_600;
// The server trusts the loopback address the tests connect from as a proxy (and a proxy
// network behind it), so each test counts its sign-ins under an address of its own, the one
// X-Forwarded-For names.
const s = useServer({
  config: {
    consoleSessionIdleS: IDLE_S,
    consoleSessionMaxS: MAX_S,
    consoleSessionsPerRootKey: 3,
    consoleSignInsPerMinute: 5,
    trustedProxies: compileCidrs(["127.0.0.1", "10.0.0.0/8"]),
  },
});
let addresses = 0;
const from = () => ({ "x-forwarded-for": `198.51.100.${++addresses}` });
const listApis = (session: { cookie: string; csrf: string | null }) =>
  consoleCall(s, "ApisService/ListApis", {}, session);

describe("console sign-in", () => {
  it("answers 401 for an unknown root key and writes nothing", async () => {
    const before = await s.snapshot();
    const res = await signIn(s, "not_a_root_key_0123456789", from());
    expect(res.status).toBe(401);
    expect(res.body.error.type).toContain("authentication/key_not_found");
    expect(res.setCookies).toEqual([]);
    expect(await s.changesSince(before)).toEqual({});
    // Counted, not stored.
    expect((await s.admin("/metrics")).text).toMatch(
      /latchkey_console_sign_ins_total\{outcome="refused"\} [1-9]/,
    );
  });

  it("refuses a revoked root key like the authentication of a call does", async () => {
    const { id, secret } = await s.seed.rootKeyWithId(["api.*.read_api"]);
    await s.seed.revokeRootKey(id);
    const before = await s.snapshot();
    expect((await signIn(s, secret, from())).status).toBe(401);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("sets an HttpOnly, SameSite=Strict cookie for Path=/ and stores the root key's id, never a secret", async () => {
    const { id, secret } = await s.seed.rootKeyWithId(["api.*.read_api"]);
    const res = await signIn(s, secret, from());
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.setCookies).toHaveLength(1);
    const attrs = (res.setCookies[0] as string).split("; ");
    expect(attrs[0]).toMatch(/^latchkey_console=[A-Za-z0-9]{43}$/);
    expect(attrs.slice(1).sort()).toEqual(
      ["HttpOnly", `Max-Age=${MAX_S}`, "Path=/", "SameSite=Strict"].sort(),
    );
    expect(res.body.data).toMatchObject({
      rootKeyId: id,
      workspaceId: s.workspaceId,
      permissions: ["api.*.read_api"],
      idleTimeoutS: IDLE_S,
    });
    expect(JSON.stringify(res.body)).not.toContain(secret);
    const rows = await s.db.query<Record<string, unknown>>(
      "select * from console_sessions where root_key_id = $1",
      [id],
    );
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(res.cookie.split("=")[1]);
    expect(stored).not.toContain(res.csrf);
  });

  it("marks the cookie Secure with the __Host- prefix when the trusted proxy says https", async () => {
    const res = await signIn(s, s.rootKey, { ...from(), "x-forwarded-proto": "https" });
    expect(res.status).toBe(200);
    const attrs = (res.setCookies[0] as string).split("; ");
    expect(attrs[0]).toMatch(/^__Host-latchkey_console=/);
    expect(attrs).toContain("Secure");
    // The secure cookie works for calls like the plain one.
    expect((await listApis(res)).status).toBe(200);
  });

  it("answers 415, 400 and 413 for a body that is not one root key in JSON", async () => {
    const post = (body: string, type = "application/json") =>
      fetch(`${s.url}/console/api/sign-in`, {
        method: "POST",
        headers: { "content-type": type, ...from() },
        body,
      });
    const form = await post("rootKey=x", "application/x-www-form-urlencoded");
    expect(form.status).toBe(415);
    const missing = await post("{}");
    expect(missing.status).toBe(400);
    expect((await json(missing)).error.errors[0].location).toBe("/rootKey");
    const unknown = await post(JSON.stringify({ rootKey: "x", remember: true }));
    expect((await json(unknown)).error.errors[0].location).toBe("/remember");
    expect((await post("not json")).status).toBe(400);
    expect((await post(JSON.stringify({ rootKey: "k".repeat(600) }))).status).toBe(400);
    expect((await post(JSON.stringify({ rootKey: "k".repeat(5000) }))).status).toBe(413);
    const get = await fetch(`${s.url}/console/api/sign-in`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });

  it("bounds sign-in attempts per address and minute with 429, before reading the key", async () => {
    const address = from();
    for (let i = 0; i < 5; i++)
      expect((await signIn(s, "wrong_key_0123456789", address)).status).toBe(401);
    const before = await s.snapshot();
    const refused = await signIn(s, s.rootKey, address);
    expect(refused.status).toBe(429);
    expect(refused.body.error.type).toContain("too_many_requests/sign_in_rate_limited");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await s.admin("/metrics")).text).toMatch(
      /latchkey_console_sign_ins_total\{outcome="limited"\} [1-9]/,
    );
    expect(await s.changesSince(before)).toEqual({});
    // Another address is not held back; the next minute this one may try again.
    expect((await signIn(s, s.rootKey, from())).status).toBe(200);
    s.clock.advance(60_000);
    expect((await signIn(s, s.rootKey, address)).status).toBe(200);
  });

  it("counts attempts by the client the trusted proxies vouch for, walking X-Forwarded-For from the right", async () => {
    const client = `198.51.100.${++addresses}`;
    // What the client wrote itself (left of its own address) changes nothing; the proxies
    // behind the first one (10.0.0.0/8) are walked over.
    const chains = [
      client,
      `203.0.113.1, ${client}`,
      `203.0.113.2, ${client}, 10.0.0.7`,
      `${client}, 10.1.1.1, 10.0.0.2`,
      `203.0.113.3, ${client}`,
    ];
    for (const chain of chains) {
      const res = await signIn(s, "wrong_key_0123456789", { "x-forwarded-for": chain });
      expect({ chain, status: res.status }).toEqual({ chain, status: 401 });
    }
    const refused = await signIn(s, s.rootKey, { "x-forwarded-for": `192.0.2.1, ${client}` });
    expect(refused.status).toBe(429);
    // The proxy's own address is not the client: another client behind it is not held back.
    const other = await signIn(s, s.rootKey, {
      "x-forwarded-for": `198.51.100.${++addresses}, 10.0.0.7`,
    });
    expect(other.status).toBe(200);
  });

  it("keeps at most CONSOLE_SESSIONS_PER_ROOT_KEY sessions, ending the least recently used", async () => {
    const { id, secret } = await s.seed.rootKeyWithId(["api.*.read_api"]);
    const sessions: SignInResult[] = [];
    for (let i = 0; i < 3; i++) {
      sessions.push(await signIn(s, secret, from()));
      s.clock.advance(60_000);
    }
    // The first is used again, so the second is now the least recently used.
    expect((await listApis(sessions[0] as SignInResult)).status).toBe(200);
    s.clock.advance(60_000);
    sessions.push(await signIn(s, secret, from()));
    const rows = (await sessionRows(s)).filter((r) => r.root_key_id === id);
    expect(rows).toHaveLength(3);
    expect((await listApis(sessions[1] as SignInResult)).status).toBe(401);
    for (const i of [0, 2, 3])
      expect((await listApis(sessions[i] as SignInResult)).status).toBe(200);
  });

  it("never ends the session just made, even when others were last used at the same instant", async () => {
    const { secret } = await s.seed.rootKeyWithId(["api.*.read_api"]);
    for (let i = 0; i < 8; i++) {
      const session = await signIn(s, secret, from());
      expect((await listApis(session)).status).toBe(200);
    }
  });
});

describe("calls with a console session", () => {
  it("act as the session's root key through the Connect door", async () => {
    const apiId = await s.seed.api();
    const { secret } = await s.seed.rootKeyWithId([`api.${apiId}.read_api`]);
    const session = await signIn(s, secret, from());
    const listed = await listApis(session);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((a: { id: string }) => a.id)).toEqual([apiId]);
    // A narrow key is as narrow through its session.
    const create = await consoleCall(s, "ApisService/CreateApi", { name: "nope" }, session);
    expect(create.status).toBe(403);
    expect(create.body.message).toContain("api.*.create_api");
  });

  it("are refused without the session's CSRF header, or with another session's", async () => {
    const mine = await signIn(s, s.rootKey, from());
    const other = await signIn(s, s.rootKey, from());
    const before = await s.snapshot();
    const bare = await consoleCall(
      s,
      "ApisService/CreateApi",
      { name: "csrf" },
      { ...mine, csrf: null },
    );
    expect(bare.status).toBe(401);
    expect(bare.body.message).toContain("X-Latchkey-Csrf");
    const wrong = await consoleCall(
      s,
      "ApisService/CreateApi",
      { name: "csrf" },
      { ...mine, csrf: other.csrf },
    );
    expect(wrong.status).toBe(401);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("cannot be made by another site's form, and a preflight from another origin is granted nothing", async () => {
    const session = await signIn(s, s.rootKey, from());
    const before = await s.snapshot();
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      const res = await fetch(`${s.url}/latchkey.v2.ApisService/CreateApi`, {
        method: "POST",
        headers: { "content-type": type, cookie: session.cookie },
        body: '{"name":"from a form"}',
      });
      expect(res.status, type).toBe(415);
    }
    expect(await s.changesSince(before)).toEqual({});
    const preflight = await fetch(`${s.url}/latchkey.v2.ApisService/CreateApi`, {
      method: "OPTIONS",
      headers: {
        origin: "https://elsewhere.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, x-latchkey-csrf",
      },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    expect(preflight.headers.get("access-control-allow-headers")).toBeNull();
  });

  it("are not accepted on the /v2 door, which takes only an Authorization header", async () => {
    const session = await signIn(s, s.rootKey, from());
    const res = await s.raw("/v2/apis.listApis", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        cookie: session.cookie,
        "x-latchkey-csrf": session.csrf,
      },
      body: "{}",
    });
    expect(res.status).toBe(401);
    expect(res.body.error.type).toContain("authentication/missing");
  });

  it("end when the session has been idle for CONSOLE_SESSION_IDLE_S, and not while it is used", async () => {
    const session = await signIn(s, s.rootKey, from());
    for (let i = 0; i < 4; i++) {
      s.clock.advance((IDLE_S - 60) * 1000);
      expect((await listApis(session)).status).toBe(200);
    }
    s.clock.advance(IDLE_S * 1000);
    const ended = await listApis(session);
    expect(ended.status).toBe(401);
    expect(ended.body.message).toContain("sign in again");
    const asked = await fetch(`${s.url}/console/api/session`, {
      headers: { cookie: session.cookie },
    });
    expect(asked.status).toBe(401);
    expect(asked.headers.getSetCookie()[0]).toContain("Max-Age=0");
  });

  it("end at CONSOLE_SESSION_MAX_S after sign-in however much the session is used", async () => {
    const session = await signIn(s, s.rootKey, from());
    const steps = Math.floor(MAX_S / (IDLE_S - 60));
    for (let i = 0; i < steps; i++) {
      s.clock.advance((IDLE_S - 60) * 1000);
      expect((await listApis(session)).status).toBe(200);
    }
    s.clock.advance((IDLE_S - 60) * 1000);
    expect((await listApis(session)).status).toBe(401);
  });

  it("end at once when the root key is revoked, and the row goes", async () => {
    const { id, secret } = await s.seed.rootKeyWithId(["api.*.read_api"]);
    const session = await signIn(s, secret, from());
    expect((await listApis(session)).status).toBe(200);
    await s.seed.revokeRootKey(id);
    expect((await listApis(session)).status).toBe(401);
    expect((await sessionRows(s)).filter((r) => r.root_key_id === id)).toEqual([]);
  });

  it("follow the root key's permissions as they are on each call", async () => {
    const { id, secret } = await s.seed.rootKeyWithId(["api.*.read_api"]);
    const session = await signIn(s, secret, from());
    expect((await consoleCall(s, "ApisService/CreateApi", { name: "later" }, session)).status).toBe(
      403,
    );
    await s.db.query("update root_keys set permissions = $2 where id = $1", [
      id,
      ["api.*.read_api", "api.*.create_api"],
    ]);
    expect((await consoleCall(s, "ApisService/CreateApi", { name: "later" }, session)).status).toBe(
      200,
    );
  });
});

describe("the session endpoint and sign-out", () => {
  it("answers the session (with its CSRF token) to the cookie, and 401 without one", async () => {
    const session = await signIn(s, s.rootKey, from());
    const res = await fetch(`${s.url}/console/api/session`, {
      headers: { cookie: session.cookie },
    });
    expect(res.status).toBe(200);
    expect((await json(res)).data).toMatchObject({
      csrfToken: session.csrf,
      permissions: ["*.*.*"],
    });
    expect((await fetch(`${s.url}/console/api/session`)).status).toBe(401);
  });

  it("deletes the session and clears the cookie; without the CSRF header it is refused", async () => {
    const session = await signIn(s, s.rootKey, from());
    const signOut = (csrf?: string) =>
      fetch(`${s.url}/console/api/sign-out`, {
        method: "POST",
        headers: { cookie: session.cookie, ...(csrf ? { "x-latchkey-csrf": csrf } : {}) },
      });
    const refused = await signOut();
    expect(refused.status).toBe(401);
    expect((await listApis(session)).status).toBe(200);
    const rowsBefore = (await sessionRows(s)).length;
    const done = await signOut(session.csrf);
    expect(done.status).toBe(200);
    expect(done.headers.getSetCookie()[0]).toMatch(/^latchkey_console=; Path=\/; Max-Age=0/);
    expect((await sessionRows(s)).length).toBe(rowsBefore - 1);
    expect((await listApis(session)).status).toBe(401);
  });

  it("are removed by the retention pass once ended", async () => {
    const session = await signIn(s, s.rootKey, from());
    const id = (await sessionRows(s)).at(-1)?.id;
    expect(await expireConsoleSessions(s.db, s.clock.now(), IDLE_S * 1000)).toBeGreaterThanOrEqual(
      0,
    );
    expect((await sessionRows(s)).some((r) => r.id === id)).toBe(true);
    s.clock.advance(IDLE_S * 1000);
    expect(await expireConsoleSessions(s.db, s.clock.now(), IDLE_S * 1000)).toBeGreaterThan(0);
    expect((await sessionRows(s)).some((r) => r.id === id)).toBe(false);
    expect((await listApis(session)).status).toBe(401);
  });
});

describe("a server whose trusted proxies do not include the connection's peer", () => {
  // The tests connect from 127.0.0.1, which is not among these proxies: its forwarded headers
  // are a client's own words.
  const plain = useServer({
    config: { trustedProxies: compileCidrs(["10.0.0.0/8"]), consoleSignInsPerMinute: 2 },
  });
  it("ignores X-Forwarded-Proto: the cookie is not Secure over plain HTTP", async () => {
    const res = await signIn(plain, plain.rootKey, { "x-forwarded-proto": "https" });
    expect(res.status).toBe(200);
    expect(res.setCookies[0]).not.toContain("Secure");
    expect(res.setCookies[0]).toMatch(/^latchkey_console=/);
  });

  it("ignores X-Forwarded-For: attempts are counted by the peer, whatever address it names", async () => {
    plain.clock.advance(60_000);
    for (const address of ["198.51.100.1", "198.51.100.2"]) {
      const res = await signIn(plain, "wrong_key_0123456789", { "x-forwarded-for": address });
      expect(res.status).toBe(401);
    }
    const refused = await signIn(plain, plain.rootKey, { "x-forwarded-for": "198.51.100.3" });
    expect(refused.status).toBe(429);
  });
});
