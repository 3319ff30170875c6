// What the open-loop generator drives: a client that sends request `i` and reports whether
// it was answered well.

export interface Counts {
  ok: number;
  non2xx: number;
  errors: number;
  /** Answered, but with another code than the expected one. */
  unexpected: number;
}

export interface LoadClient {
  /** Sends request `i`; `done(ok)` runs once when it is answered or failed. */
  send(i: number, done: (ok: boolean) => void): void;
  destroy(): void;
  /** Answers by code (the /v2 answer's `data.code`, or the grpc-status). */
  codes: Record<string, number>;
  counts: Counts;
}

/** What to send, shared by both modes of the generator. */
export interface Target {
  /** /v2 URL, or with `grpc` the gRPC port and method path. */
  url: string;
  headers?: Record<string, string>;
  /** A fixed JSON body; without it, {"key": `${keys.prefix}${i}`}. */
  body?: string;
  /**
   * A JSON body of its own per request: every `%i` replaced by the request's number (an
   * idempotency key that no other request repeats). Instead of `body`.
   */
  bodyEach?: string;
  keys?: { prefix: string; from: number; count?: number };
  /**
   * gRPC instead of /v2 JSON: one length-prefixed message, base64, sent over `connections`
   * HTTP/2 connections (1 by default).
   */
  grpc?: { body: string; connections?: number };
  /** The /v2 answers' expected `data.code` (VALID). */
  expectCode?: string;
  /** Keep-alive connections at most (HTTP/1.1; 256 by default), opened as needed. */
  maxSockets?: number;
}

export const emptyCounts = (): Counts => ({ ok: 0, non2xx: 0, errors: 0, unexpected: 0 });
