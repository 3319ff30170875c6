import { newId } from "../domain/ids.js";
import type { MatchLabel } from "../domain/secret-scanning-report.js";
import { errors, type ServiceError } from "../errors/service-error.js";
import type { Logger } from "../log.js";
import type { Metrics } from "../metrics.js";
import type { SignedReport } from "../services/secret-scanning/github-receiver.js";
import { errorEnvelope } from "./error-envelope.js";
import { ClientGoneError, errorType, toServiceError } from "./interceptors/request-context.js";
import {
  BodyTooLargeError,
  type NodeRequest,
  type NodeResponse,
  readBody,
  sendJson,
} from "./node-io.js";

/** Where GitHub's secret-scanning partner programme sends its reports. */
export const GITHUB_SECRET_SCANNING_PATH = "/v2/secret-scanning/github";

/** The name its calls are counted under in the request metrics. */
const PROCEDURE = "secretScanning.github";

/** What the receiver's door needs. */
export interface SecretScanningDoorOptions {
  receive: (report: SignedReport) => Promise<MatchLabel[]>;
  maxBodyBytes: number;
  docsUrl: string | undefined;
  log: Logger;
  metrics: Metrics;
}

function header(req: NodeRequest, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" ? value.trim() : undefined;
}

/**
 * The door of `POST /v2/secret-scanning/github`: not a procedure of the contract (GitHub sends
 * a bare JSON array signed over its raw bytes, and is authenticated by that signature, not by
 * a root key), so it reads the body itself, bounded like every door's, and answers GitHub's
 * label array or a catalog error in the /v2 envelope. Returns false for any other path.
 */
export function createSecretScanningDoor(opts: SecretScanningDoorOptions) {
  function fail(res: NodeResponse, requestId: string, err: ServiceError): void {
    const headers: Record<string, string> = { "x-request-id": requestId };
    if (err.entry.status === 405) headers.allow = "POST";
    if (err.entry.status === 413 && !("stream" in res)) headers.connection = "close";
    sendJson(
      res,
      err.entry.status,
      errorEnvelope(err, requestId, errorType(opts.docsUrl, err)),
      headers,
    );
  }

  async function handle(req: NodeRequest, res: NodeResponse): Promise<void> {
    const started = performance.now();
    const requestId = newId("req");
    let status = 200;
    try {
      if (req.method !== "POST") throw errors.methodNotAllowed(req.method ?? "");
      const type = req.headers["content-type"]?.split(";", 1)[0]?.trim().toLowerCase();
      if (type !== "application/json")
        throw errors.unsupportedMediaType(req.headers["content-type"]);
      if (Number(req.headers["content-length"] ?? 0) > opts.maxBodyBytes) {
        throw errors.bodyTooLarge(opts.maxBodyBytes);
      }
      const body = await readBody(req, opts.maxBodyBytes).catch((err: unknown) => {
        throw err instanceof BodyTooLargeError
          ? errors.bodyTooLarge(opts.maxBodyBytes)
          : new ClientGoneError("the client closed the connection", { cause: err });
      });
      const labels = await opts.receive({
        keyIdentifier: header(req, "github-public-key-identifier"),
        signature: header(req, "github-public-key-signature"),
        body,
        requestId,
      });
      sendJson(res, 200, labels, { "x-request-id": requestId });
    } catch (thrown) {
      const err = toServiceError(thrown, opts.log, requestId);
      status = err.entry.status;
      if (res.headersSent) res.destroy();
      else fail(res, requestId, err);
    }
    opts.metrics.observe(PROCEDURE, "json", status, (performance.now() - started) / 1000);
  }

  return (req: NodeRequest, res: NodeResponse): boolean => {
    const url = req.url ?? "/";
    const query = url.indexOf("?");
    if ((query < 0 ? url : url.slice(0, query)) !== GITHUB_SECRET_SCANNING_PATH) return false;
    void handle(req, res);
    return true;
  };
}
