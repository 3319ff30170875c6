import type { KeyObject } from "node:crypto";
import type { Clock } from "../../domain/clock.js";
import {
  KeyListError,
  type PublicKeySetting,
  parseKeyList,
  type TrustedKey,
} from "../../domain/github-keys.js";
import { errors } from "../../errors/service-error.js";
import type { Logger } from "../../log.js";

/** How a fetched key list is kept and fetched again. */
export interface KeyListTiming {
  /** Longest a fetch may take, headers and body. */
  timeoutMs: number;
  /** How long a fetched list is used before it is fetched again. */
  freshMs: number;
  /** An identifier the list lacks fetches it again early, but at most this often. */
  minRefetchMs: number;
  /** After a failed fetch, the next is tried no sooner than this. */
  retryMs: number;
}

/**
 * GitHub rotates keys rarely: an hour's list, fetched again early at most every 5 minutes,
 * and 10 s between tries while its host fails.
 */
export const KEY_LIST_TIMING: KeyListTiming = {
  timeoutMs: 5_000,
  freshMs: 3_600_000,
  minRefetchMs: 300_000,
  retryMs: 10_000,
};

/** The largest key list read: GitHub's is about a kilobyte. */
const MAX_KEY_LIST_BYTES = 64 * 1024;

/**
 * The public keys that secret-scanning reports are checked against, by identifier. Inline
 * keys are used as they are. A key list at a URL is fetched on first use, kept `freshMs`,
 * and fetched again early for an identifier it lacks, but at most every `minRefetchMs`: an
 * unsigned caller naming made-up identifiers costs the key list's host at most one request
 * in that period. One fetch at a time; callers meanwhile wait for it. A fetch that fails
 * (unreachable, slow, not 200, not a key list) leaves the last list in use and is tried
 * again after `retryMs`; with no list at all, the caller gets 503.
 */
export class PublicKeys {
  #keys: readonly TrustedKey[] = [];
  /** When (by the clock) the list is due to be fetched again, and again early. */
  #nextFetchAt = Number.NEGATIVE_INFINITY;
  #nextEarlyFetchAt = Number.NEGATIVE_INFINITY;
  #fetching: Promise<void> | undefined;
  /** False while there is no fetched list at all. */
  #loaded = false;

  constructor(
    private readonly setting: PublicKeySetting,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly timing: KeyListTiming = KEY_LIST_TIMING,
  ) {
    if (setting.kind === "keys") {
      this.#keys = setting.keys;
      this.#loaded = true;
    }
  }

  /** The key named `id`, or undefined when none is; 503 when the list cannot be had. */
  async find(id: string): Promise<KeyObject | undefined> {
    if (this.setting.kind === "keys") return this.#lookup(id);
    const now = this.clock.now();
    const missing = this.#lookup(id) === undefined && now >= this.#nextEarlyFetchAt;
    if (now >= this.#nextFetchAt || missing) await this.#refresh(this.setting.url);
    if (!this.#loaded) throw errors.serviceUnavailable(new Error("no secret-scanning key list"));
    return this.#lookup(id);
  }

  #lookup(id: string): KeyObject | undefined {
    return this.#keys.find((k) => k.id === id)?.key;
  }

  #refresh(url: string): Promise<void> {
    if (!this.#fetching) {
      this.#fetching = this.#fetch(url).finally(() => {
        this.#fetching = undefined;
      });
    }
    return this.#fetching;
  }

  async #fetch(url: string): Promise<void> {
    const { timeoutMs, freshMs, minRefetchMs, retryMs } = this.timing;
    try {
      this.#keys = parseKeyList(await fetchJson(url, timeoutMs));
      this.#loaded = true;
      const now = this.clock.now();
      this.#nextFetchAt = now + freshMs;
      this.#nextEarlyFetchAt = now + minRefetchMs;
    } catch (err) {
      // A failing host is not asked again at once, whoever asks.
      this.#nextFetchAt = this.#nextEarlyFetchAt = this.clock.now() + retryMs;
      this.log.warn(
        { url, err: err instanceof Error ? err.message : String(err) },
        "could not fetch the secret-scanning key list",
      );
    }
  }
}

/** GETs a URL's JSON, within `timeoutMs` for the whole answer and MAX_KEY_LIST_BYTES of body. */
async function fetchJson(url: string, timeoutMs: number): Promise<unknown> {
  const signal = AbortSignal.timeout(timeoutMs);
  const res = await fetch(url, { signal, headers: { accept: "application/json" } });
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new KeyListError(`answered ${res.status}`);
  }
  const reader = res.body?.getReader();
  if (!reader) throw new KeyListError("an empty answer");
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_KEY_LIST_BYTES) {
      await reader.cancel();
      throw new KeyListError(`an answer over ${MAX_KEY_LIST_BYTES} bytes`);
    }
    chunks.push(value);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new KeyListError("an answer that is not JSON");
  }
}
