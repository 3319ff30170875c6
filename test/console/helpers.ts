import type { TestServer } from "../harness/server.js";

/** A response's JSON body, read as whatever the test expects. */
// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
export async function json(res: Response): Promise<any> {
  return res.json();
}

/** What a sign-in answered: status, body, the Set-Cookie values and the session's parts. */
export interface SignInResult {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  body: any;
  headers: Headers;
  setCookies: string[];
  /** `name=value` of the session cookie, as a browser would send it back. */
  cookie: string;
  csrf: string;
}

/** Signs in to the console with `rootKey`, from `address` when the server trusts a proxy. */
export async function signIn(
  s: TestServer,
  rootKey: string,
  headers: Record<string, string> = {},
): Promise<SignInResult> {
  const res = await fetch(`${s.url}/console/api/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ rootKey }),
  });
  const body = await json(res);
  const setCookies = res.headers.getSetCookie();
  return {
    status: res.status,
    body,
    headers: res.headers,
    setCookies,
    cookie: (setCookies[0] ?? "").split(";")[0] as string,
    csrf: body?.data?.csrfToken ?? "",
  };
}

/**
 * A Connect JSON call as the console makes it: the session cookie and, unless `csrf` is
 * null, the CSRF header.
 */
export async function consoleCall(
  s: TestServer,
  path: string,
  body: unknown,
  session: { cookie: string; csrf: string | null },
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    cookie: session.cookie,
  };
  if (session.csrf !== null) headers["x-latchkey-csrf"] = session.csrf;
  const res = await fetch(`${s.url}/latchkey.v2.${path}`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await json(res) };
}

/** The console_sessions rows, oldest first. */
export function sessionRows(s: TestServer) {
  return s.db.query<{ id: string; root_key_id: string; last_seen_at: number }>(
    "select id, root_key_id, last_seen_at from console_sessions order by created_at, id",
  );
}
