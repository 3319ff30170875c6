// A lean HTTP/1.1 client on raw keep-alive sockets, one request at a time per socket (no
// pipelining). The generator must cost far less than the server it measures, or its own
// garbage collections and event-loop turns show up as the server's latency: Node's
// http.request allocates a ClientRequest, an IncomingMessage and header objects per call.
// Here a request is one preformatted buffer and an answer is parsed in place (status line,
// Content-Length, body).
import net from "node:net";
import { emptyCounts, type LoadClient, type Target } from "./client.ts";

interface Connection {
  socket: net.Socket;
  done: ((ok: boolean) => void) | null;
  buf: Buffer | null;
}

export function http1Client(target: Target): LoadClient {
  const u = new URL(target.url);
  const port = Number(u.port || 80);
  let head = `POST ${u.pathname} HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\n`;
  for (const [name, value] of Object.entries(target.headers ?? {})) head += `${name}: ${value}\r\n`;
  const encode = (body: string) =>
    Buffer.from(`${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  const fixed = target.body === undefined ? null : encode(target.body);
  const prefix = target.keys?.prefix ?? "";
  const each = target.bodyEach;
  const requestOf = (i: number) =>
    fixed ??
    (each === undefined
      ? encode(`{"key":"${prefix}${i}"}`)
      : encode(each.replaceAll("%i", `${i}`)));
  const maxSockets = target.maxSockets ?? 256;
  const codes: Record<string, number> = {};
  const counts = emptyCounts();
  const idle: Connection[] = [];
  const queue: { i: number; done: (ok: boolean) => void }[] = [];
  const sockets = new Set<Connection>();

  function answer(conn: Connection, status: number, body: string) {
    const done = conn.done;
    conn.done = null;
    if (status !== 200) {
      counts.non2xx++;
    } else {
      const code = /"code":"([A-Z_]+)"/.exec(body)?.[1] ?? "?";
      codes[code] = (codes[code] ?? 0) + 1;
      if (target.expectCode && code !== target.expectCode) counts.unexpected++;
      counts.ok++;
    }
    release(conn);
    done?.(status === 200);
  }

  /** Parses every whole answer in the connection's buffer; keeps a partial one. */
  function onData(conn: Connection, chunk: Buffer) {
    let buf = conn.buf === null ? chunk : Buffer.concat([conn.buf, chunk]);
    conn.buf = null;
    for (;;) {
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) break;
      const headText = buf.toString("latin1", 0, end).toLowerCase();
      const status = Number(headText.slice(9, 12));
      const at = headText.indexOf("\r\ncontent-length:");
      if (at < 0) return fail(conn); // every server measured here sends Content-Length
      const length = Number.parseInt(headText.slice(at + 17), 10);
      if (buf.length < end + 4 + length) break;
      const body = buf.toString("latin1", end + 4, end + 4 + length);
      buf = buf.subarray(end + 4 + length);
      if (conn.done === null) return fail(conn); // an answer nobody asked for
      answer(conn, status, body);
      if (buf.length === 0) return;
    }
    conn.buf = buf;
  }

  /** Drops a broken connection (once: "error" is followed by "close"), failing its request. */
  function fail(conn: Connection) {
    if (!sockets.delete(conn)) return;
    const i = idle.indexOf(conn);
    if (i >= 0) idle.splice(i, 1);
    conn.socket.destroy();
    if (conn.done !== null) {
      const done = conn.done;
      conn.done = null;
      counts.errors++;
      done(false);
    }
    const next = queue.shift();
    if (next !== undefined) send(next.i, next.done);
  }

  function connect(): Connection {
    const socket = net.connect({ host: u.hostname, port, noDelay: true });
    const conn: Connection = { socket, done: null, buf: null };
    socket.on("data", (chunk: Buffer) => onData(conn, chunk));
    socket.on("error", () => fail(conn));
    socket.on("close", () => fail(conn));
    sockets.add(conn);
    return conn;
  }

  function release(conn: Connection) {
    const next = queue.shift();
    if (next === undefined) idle.push(conn);
    else write(conn, next.i, next.done);
  }

  function write(conn: Connection, i: number, done: (ok: boolean) => void) {
    conn.done = done;
    conn.socket.write(requestOf(i));
  }

  function send(i: number, done: (ok: boolean) => void) {
    const conn = idle.pop() ?? (sockets.size < maxSockets ? connect() : undefined);
    if (conn === undefined) queue.push({ i, done });
    else write(conn, i, done);
  }

  return {
    send,
    destroy: () => {
      for (const conn of sockets) conn.socket.destroy();
    },
    codes,
    counts,
  };
}
