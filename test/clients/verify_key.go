// A Go client of Latchkey generated with plain protoc (protoc-gen-go and protoc-gen-go-grpc
// from proto/, no import-path flags), calling the gRPC port. docs/clients.md quotes it and
// generated-clients.test.ts builds and runs it. It prints one JSON object of what it saw.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	latchkeyv2 "latchkey/gen/go/latchkey/v2"
)

func main() {
	address := os.Getenv("LATCHKEY_GRPC_ADDRESS") // host:port of the gRPC port, e.g. localhost:9090
	rootKey := os.Getenv("LATCHKEY_ROOT_KEY")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// WithInsecure: the port speaks cleartext HTTP/2 (put TLS in front of it in production).
	conn, err := grpc.DialContext(ctx, address, grpc.WithInsecure())
	check(err)
	defer conn.Close()
	// The root key travels as the authorization metadata of each call.
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+rootKey)
	apis := latchkeyv2.NewApisServiceClient(conn)
	keys := latchkeyv2.NewKeysServiceClient(conn)

	api, err := apis.CreateApi(authed, &latchkeyv2.CreateApiRequest{Name: "from-go"})
	check(err)
	created, err := keys.CreateKey(authed, &latchkeyv2.CreateKeyRequest{ApiId: api.GetData().GetApiId()})
	check(err)

	verified, err := keys.VerifyKey(authed, &latchkeyv2.VerifyKeyRequest{Key: created.GetData().GetKey()})
	check(err)
	unknown, err := keys.VerifyKey(authed, &latchkeyv2.VerifyKeyRequest{Key: "sk_not_a_key_of_this_api"})
	check(err)

	// A refused call: the gRPC status carries a latchkey.v2.ErrorDetail among its details.
	_, err = apis.CreateApi(authed, &latchkeyv2.CreateApiRequest{Name: "x"})
	refusal := status.Convert(err)
	var detail *latchkeyv2.ErrorDetail
	for _, d := range refusal.Details() {
		if found, ok := d.(*latchkeyv2.ErrorDetail); ok {
			detail = found
		}
	}
	if detail == nil {
		check(fmt.Errorf("no ErrorDetail in %v", refusal))
	}

	out, err := json.Marshal(map[string]any{
		"apiId":       api.GetData().GetApiId(),
		"keyId":       created.GetData().GetKeyId(),
		"valid":       verified.GetData().GetValid(),
		"code":        verified.GetData().GetCode().String(),
		"unknownCode": unknown.GetData().GetCode().String(),
		"refused": map[string]any{
			"grpcCode":  refusal.Code().String(),
			"code":      detail.GetCode(),
			"status":    detail.GetStatus(),
			"location":  detail.GetErrors()[0].GetLocation(),
			"requestId": detail.GetRequestId(),
		},
	})
	check(err)
	fmt.Println(string(out))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
