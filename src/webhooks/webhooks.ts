import type { Deps } from "../services/deps.js";
import { CreditPass } from "./credit-pass.js";
import { WebhookDispatcher } from "./dispatcher.js";
import { expiryPass } from "./expiry-pass.js";
import { EndpointPresence } from "./presence.js";
import { RatelimitNotices } from "./ratelimit-notices.js";
import { Subscriptions } from "./subscriptions.js";

/** The longest wait between two key expiry passes: expiries are announced within a minute. */
const MAX_EXPIRY_INTERVAL_MS = 15_000;

/** Webhooks on one node: the dispatcher, the passes that derive events, the notices. */
export interface Webhooks {
  /** Looks for due deliveries now. */
  wake(): void;
  readonly ratelimitNotices: RatelimitNotices;
  readonly dispatcher: WebhookDispatcher;
  /** Runs the key expiry and credit passes now (the timers run them too). */
  runPasses(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts this node's webhook machinery: the dispatcher's loop, and the periodic passes that
 * derive key.expired (from key expiries) and the credit events (from the credit ledger),
 * each pass one process at a time across nodes. Failures are logged and tried again at the
 * next pass.
 */
export function startWebhooks(
  deps: Pick<Deps, "db" | "bus" | "clock" | "log" | "metrics" | "config">,
): Webhooks {
  const c = deps.config;
  const dispatcher = new WebhookDispatcher(deps, {
    concurrency: c.webhookConcurrency,
    perEndpoint: c.webhookEndpointConcurrency,
    perWorkspace: c.webhookWorkspaceConcurrency,
    pollIntervalMs: c.webhookPollIntervalMs,
  });
  const subscriptions = new Subscriptions(deps.db, deps.clock, deps.bus);
  const ratelimitNotices = new RatelimitNotices(deps.db, subscriptions, deps.log, () =>
    dispatcher.wake(),
  );
  const credits = new CreditPass(deps.db);
  let lastExpiry = Number.NEGATIVE_INFINITY;
  let running: Promise<void> | undefined;
  const pass = async (forceExpiry: boolean) => {
    const now = deps.clock.now();
    try {
      if (await credits.run(now)) dispatcher.wake();
    } catch (err) {
      deps.log.warn({ err }, "deriving credit webhook events failed; retrying at the next pass");
    }
    const expiryDue =
      Date.now() - lastExpiry >= Math.min(MAX_EXPIRY_INTERVAL_MS, c.webhookPollIntervalMs * 15);
    if (!forceExpiry && !expiryDue) return;
    lastExpiry = Date.now();
    try {
      if (await expiryPass(deps.db, now)) dispatcher.wake();
    } catch (err) {
      deps.log.warn({ err }, "announcing key expiries failed; retrying at the next pass");
    }
  };
  const runPasses = (force = true) => {
    running ??= pass(force).finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => void runPasses(false), c.webhookPollIntervalMs);
  timer.unref();
  const presence = new EndpointPresence(deps.db, deps.clock, deps.bus);
  dispatcher.start(() => presence.any());
  void runPasses(true);
  return {
    wake: () => dispatcher.wake(),
    ratelimitNotices,
    dispatcher,
    runPasses: () => runPasses(true),
    async stop() {
      clearInterval(timer);
      await running;
      await dispatcher.stop();
    },
  };
}
