import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { isPrivateAddress } from "../../../src/domain/webhooks/addresses.js";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { eventually, startReceiver } from "../../harness/webhook-receiver.js";

// Without WEBHOOK_ALLOW_PRIVATE (its default): an endpoint URL that names a private,
// loopback or link-local address is refused at creation, and a name that resolves to one is
// refused when a delivery is made (checked after resolution, the connection made to the
// checked address), so the receiver never hears from Latchkey.

const s = useServer({ config: { webhookPollIntervalMs: 20 } });

describe("private addresses", () => {
  it.each([
    "http://127.0.0.1:8080/hook",
    "http://localhost/hook",
    "http://[::1]/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://10.1.2.3/hook",
    "http://0x7f000001/hook",
    "http://[::ffff:192.168.0.1]/hook",
  ])("refuses %s at creation (400 naming /url)", async (url) => {
    const r = await refusal(s.api.webhooks.createEndpoint({ url, eventTypes: ["key.created"] }));
    expect(r.status).toBe(400);
    expect(r.errors[0]?.location).toBe("/url");
  });

  it("refuses a name that resolves to a private address when delivering", async () => {
    const name = hostname();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    // This machine's own name resolves to a loopback address (Debian's /etc/hosts); where it
    // does not, the case cannot be made here.
    if (!addresses.some((a) => isPrivateAddress(a.address))) return;
    const receiver = await startReceiver();
    try {
      const url = receiver.url.replace("127.0.0.1", name);
      const made = await s.api.webhooks.createEndpoint({ url, eventTypes: ["key.created"] });
      const endpointId = made.data?.endpoint?.id as string;
      await s.seed.key();
      const d = await eventually(async () => {
        const x = (await s.api.webhooks.listDeliveries({ endpointId })).data[0];
        return x?.attempts.length ? x : undefined;
      });
      expect(d.attempts[0]).toMatchObject({
        status: "error",
        error: "refused: the address is private, loopback or link-local",
      });
      expect(receiver.received).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});
