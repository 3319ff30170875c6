"""A Python client of Latchkey generated with plain protoc (grpcio's plugin) from proto/,
calling the gRPC port. docs/clients.md quotes it and generated-clients.test.ts generates the
stubs and runs it. It prints one JSON object of what it saw."""

import json
import os

import grpc
from google.rpc import status_pb2  # from googleapis-common-protos (grpcio-status needs it too)

from latchkey.v2 import apis_pb2, apis_pb2_grpc, common_pb2, keys_pb2, keys_pb2_grpc


def error_detail(error: grpc.RpcError) -> common_pb2.ErrorDetail | None:
    """The latchkey.v2.ErrorDetail of a refused call, from the grpc-status-details-bin trailer."""
    for name, value in error.trailing_metadata() or ():
        if name == "grpc-status-details-bin":
            for detail in status_pb2.Status.FromString(value).details:
                found = common_pb2.ErrorDetail()
                if detail.Unpack(found):
                    return found
    return None


def main() -> None:
    address = os.environ["LATCHKEY_GRPC_ADDRESS"]  # host:port of the gRPC port, e.g. localhost:9090
    # The root key travels as the authorization metadata of each call.
    auth = (("authorization", "Bearer " + os.environ["LATCHKEY_ROOT_KEY"]),)
    # insecure_channel: the port speaks cleartext HTTP/2 (put TLS in front of it in production).
    with grpc.insecure_channel(address) as channel:
        apis = apis_pb2_grpc.ApisServiceStub(channel)
        keys = keys_pb2_grpc.KeysServiceStub(channel)

        api = apis.CreateApi(apis_pb2.CreateApiRequest(name="from-python"), metadata=auth, timeout=20)
        created = keys.CreateKey(keys_pb2.CreateKeyRequest(api_id=api.data.api_id), metadata=auth, timeout=20)

        verified = keys.VerifyKey(keys_pb2.VerifyKeyRequest(key=created.data.key), metadata=auth, timeout=20)
        unknown = keys.VerifyKey(
            keys_pb2.VerifyKeyRequest(key="sk_not_a_key_of_this_api"), metadata=auth, timeout=20
        )

        try:
            apis.CreateApi(apis_pb2.CreateApiRequest(name="x"), metadata=auth, timeout=20)
            raise SystemExit("a 1-character API name was accepted")
        except grpc.RpcError as error:
            refusal, detail = error, error_detail(error)
        if detail is None:
            raise SystemExit(f"no ErrorDetail in {refusal}")

    print(
        json.dumps(
            {
                "apiId": api.data.api_id,
                "keyId": created.data.key_id,
                "valid": verified.data.valid,
                "code": keys_pb2.VerifyKeyCode.Name(verified.data.code),
                "unknownCode": keys_pb2.VerifyKeyCode.Name(unknown.data.code),
                "refused": {
                    "grpcCode": refusal.code().name,
                    "code": detail.code,
                    "status": detail.status,
                    "location": detail.errors[0].location,
                    "requestId": detail.request_id,
                },
            }
        )
    )


if __name__ == "__main__":
    main()
