/**
 * The webhook events Latchkey sends: the closed list of types, the shape of each event's
 * `data`, and the body of a delivery (the Standard Webhooks shape: `type`, `timestamp`,
 * `data`). No payload ever carries a secret: keys appear by id and `start` only.
 */

/** Every event type an endpoint may subscribe to, in the order the docs list them. */
export const EVENT_TYPES = [
  "key.created",
  "key.updated",
  "key.deleted",
  "key.rerolled",
  "key.expired",
  "key.leaked",
  "credits.low",
  "credits.exhausted",
  "credits.refilled",
  "ratelimit.exceeded",
  "identity.created",
  "identity.updated",
  "identity.deleted",
] as const;

/** One of the event types. */
export type EventType = (typeof EVENT_TYPES)[number];

/** Whether a string is one of the event types. */
export function isEventType(s: string): s is EventType {
  return (EVENT_TYPES as readonly string[]).includes(s);
}

/** The key an event is about. */
interface KeyRef {
  keyId: string;
  apiId: string;
}

/** What a credits event is about: a key's own balance or an identity's pool. */
export type CreditsSubject = { keyId: string; apiId: string } | { identityId: string };

/** The `data` of each event type. */
export interface EventData {
  "key.created": KeyRef & {
    start: string;
    name?: string;
    identityId?: string;
    expires?: number;
    enabled: boolean;
  };
  /** `changed`: the names of the fields the change set ("name", "credits", "roles", ...). */
  "key.updated": KeyRef & { changed: string[] };
  "key.deleted": KeyRef & { permanent: boolean };
  /** `keyId` is the new key; the previous one keeps verifying until `previousKeyExpires`. */
  "key.rerolled": KeyRef & { previousKeyId: string; previousKeyExpires: number };
  "key.expired": KeyRef & { expires: number };
  /**
   * A key reported found where it should not be (a public repository): `source` is the
   * reporter's name for where it was found (GitHub's `content`, `commit`, `npm`, ...), `url`
   * the public URL of the finding (empty when the report gives none), `policy` the leak
   * policy of the key's API and `change` what it did to the key, `reportedAt` when the report
   * was applied.
   */
  "key.leaked": KeyRef & {
    source: string;
    url: string;
    policy: "revoke" | "disable" | "notify";
    change: "delete" | "disable" | "none";
    reportedAt: number;
  };
  "credits.low": CreditsSubject & { remaining: number; threshold: number };
  "credits.exhausted": CreditsSubject & { remaining: 0 };
  "credits.refilled": CreditsSubject & { refilled: number; remaining: number };
  "ratelimit.exceeded": KeyRef & {
    identityId?: string;
    ratelimit: string;
    limit: number;
    durationMs: number;
    windowStart: number;
    reset: number;
  };
  "identity.created": { identityId: string; externalId: string };
  "identity.updated": { identityId: string; externalId: string; changed: string[] };
  "identity.deleted": { identityId: string; externalId: string };
}

/** One event: its type and data, typed together. */
export type WebhookEvent = {
  [T in EventType]: { type: T; data: EventData[T] };
}[EventType];

/** The body of a delivery, as signed and sent: `{"type", "timestamp", "data"}`. */
export function deliveryBody(event: WebhookEvent, atMs: number): string {
  return JSON.stringify({
    type: event.type,
    timestamp: new Date(atMs).toISOString(),
    data: event.data,
  });
}

/**
 * The event types of an endpoint's subscription, each once, in the list's order: a list
 * given with repeats subscribes once.
 */
export function normaliseEventTypes(types: readonly string[]): EventType[] {
  return EVENT_TYPES.filter((t) => types.includes(t));
}
