import * as grpc from "@grpc/grpc-js";

/**
 * The two faults of the caller that grpc-js (1.14) answers INTERNAL, as if the server had
 * failed: a message flagged compressed that does not decompress with the declared
 * `grpc-encoding`, and a `grpc-timeout` header that is not a timeout. grpc-js finds both in
 * its own call object, below every server interceptor, and answers them by calling that
 * object's `sendStatus` directly, so no interceptor's responder sees the status. Its
 * `details` are the only mark of these statuses; they are matched exactly below, and the
 * gRPC port's tests fail if a grpc-js upgrade changes them.
 */
const NOT_DECOMPRESSED = "Failed to decompress message";
const BAD_TIMEOUT = /^Invalid grpc-timeout value "(.*)"$/s;

/** A status as a server call sends it. */
type Status = Parameters<grpc.ServerInterceptingCallInterface["sendStatus"]>[0];

/** One violation of the caller's request: where (`""` is the whole body) and why. */
export interface CallerFault {
  location: string;
  message: string;
}

/**
 * Makes the status for a refused call of `path`: INVALID_ARGUMENT with the door's usual
 * error detail, after the same checks as any other invalid request (the root key first).
 * `metadata` is the call's request metadata (empty if grpc-js failed before giving it).
 */
export type RefuseCall = (
  path: string,
  metadata: grpc.Metadata,
  fault: CallerFault,
) => Promise<Status>;

/** When grpc-js's own status is one of the caller's faults above: the fault. */
export function callerFaultOf(status: Status): CallerFault | undefined {
  if (status.code !== grpc.status.INTERNAL) return undefined;
  if (status.details === NOT_DECOMPRESSED) {
    return {
      location: "",
      message:
        "could not be read: the message is flagged compressed but does not decompress with its grpc-encoding",
    };
  }
  const timeout = BAD_TIMEOUT.exec(status.details);
  if (timeout) {
    return {
      location: "grpc-timeout",
      message: `must be 1 to 8 digits and a unit (H, M, S, m, u or n), as in 500m (got "${timeout[1]}")`,
    };
  }
  return undefined;
}

/**
 * A server interceptor that answers the caller's faults above INVALID_ARGUMENT, through
 * `refuse`. It must come first in the server's interceptors, so that the call it receives
 * is grpc-js's own: it takes over that object's `sendStatus` (the one way in, as grpc-js
 * calls it on itself). Once a call is refused, the request's message and end are no longer
 * passed on, so the procedure never runs while the refusal is being made.
 */
export function answerCallerFaults(refuse: RefuseCall): grpc.ServerInterceptor {
  return (method, call) => {
    let metadata: grpc.Metadata | undefined;
    let refused = false;
    const send = call.sendStatus.bind(call);
    call.sendStatus = (status) => {
      const fault = refused ? undefined : callerFaultOf(status);
      if (fault === undefined) {
        send(status);
        return;
      }
      refused = true;
      refuse(method.path, metadata ?? new grpc.Metadata(), fault).then(send, () =>
        send({ code: grpc.status.INVALID_ARGUMENT, details: fault.message }),
      );
    };
    return new grpc.ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(received, nextMetadata) {
            metadata = received;
            nextMetadata(received);
          },
          onReceiveMessage(message, nextMessage) {
            if (!refused) nextMessage(message);
          },
          onReceiveHalfClose(nextHalfClose) {
            if (!refused) nextHalfClose();
          },
        });
      },
    });
  };
}
