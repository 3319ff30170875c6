import { MAX_KEY_ID_LENGTH, signatureMatches } from "../../domain/github-keys.js";
import { hashKey } from "../../domain/key-material.js";
import {
  labelMatches,
  type MatchLabel,
  type ReportedMatch,
  readReport,
} from "../../domain/secret-scanning-report.js";
import { errors } from "../../errors/service-error.js";
import { keysByHashesAnywhere, type LeakedKeyRow } from "../../storage/queries/key-leaks.js";
import type { Deps } from "../deps.js";
import { applyLeak } from "./apply-leak.js";
import type { PublicKeys } from "./public-keys.js";

/** The most leaks (a key at a place) one report may apply: one transaction each. */
export const MAX_LEAKS_PER_REPORT = 1000;

/** A report as it arrived: its signature headers and its raw body, byte for byte. */
export interface SignedReport {
  keyIdentifier: string | undefined;
  signature: string | undefined;
  body: Buffer;
  requestId: string;
}

/**
 * Receives a secret-scanning report from GitHub's partner programme and answers a label for
 * each match. In order: the signature (401, before anything else: an unsigned or wrongly
 * signed report costs no lookup and no write), the body (400), one lookup of every token's
 * stored forms across workspaces, then each leak of a live key applied by its API's policy in
 * a transaction of its own. A secret may be a key of several workspaces (hashes are unique
 * per workspace only): each of those keys is a leaked key, and each gets its own API's policy.
 * The answer says only `true_positive` (the token is a key Latchkey issued or imported,
 * revoked ones included) or `false_positive`: nothing about which workspace, API or key.
 */
export async function receiveGithubReport(
  deps: Deps,
  keys: PublicKeys,
  report: SignedReport,
): Promise<MatchLabel[]> {
  await checkSignature(keys, report);
  const matches = readMatches(report.body);
  const found = await findKeys(deps, matches);
  const leaks = leaksOf(matches, found);
  if (leaks.length > MAX_LEAKS_PER_REPORT) throw tooManyLeaks();
  for (const { key, match } of leaks) {
    await applyLeak(deps, report.requestId, key, { source: match.source, url: match.url });
  }
  return labelMatches(matches, (token) => (found.get(token)?.length ?? 0) > 0);
}

/** A report too large in what it would do, refused before any write. */
function tooManyLeaks() {
  return errors.invalidInput(
    [{ location: "", message: `finds more than ${MAX_LEAKS_PER_REPORT} keys` }],
    `The report finds more than ${MAX_LEAKS_PER_REPORT} keys to apply leaks to; send it in parts.`,
  );
}

/** 401 unless the body is signed by the configured key the identifier names. */
async function checkSignature(keys: PublicKeys, report: SignedReport): Promise<void> {
  const { keyIdentifier: id, signature } = report;
  if (!id || !signature) {
    throw errors.signatureInvalid(
      "send the Github-Public-Key-Identifier and Github-Public-Key-Signature headers",
    );
  }
  const key = id.length <= MAX_KEY_ID_LENGTH ? await keys.find(id) : undefined;
  if (!key) throw errors.signatureInvalid("the key identifier names no trusted key");
  if (!signatureMatches(key, report.body, signature)) {
    throw errors.signatureInvalid("the signature does not match the body");
  }
}

function readMatches(body: Buffer): ReportedMatch[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch (err) {
    throw errors.invalidInput(
      [{ location: "", message: `is not valid JSON: ${(err as Error).message}` }],
      "The request body is not valid JSON.",
    );
  }
  const read = readReport(parsed);
  if ("violations" in read) throw errors.invalidInput(read.violations);
  return read.matches;
}

/**
 * The keys of each reported token, by token: one statement over every stored form each may
 * have (plain SHA-256 and under each pepper), in any workspace.
 */
async function findKeys(
  deps: Deps,
  matches: readonly ReportedMatch[],
): Promise<Map<string, LeakedKeyRow[]>> {
  const tokenOf = new Map<string, string>();
  for (const { token } of matches) {
    for (const h of deps.config.keyHashing.candidates(token, hashKey(token))) tokenOf.set(h, token);
  }
  const rows = await keysByHashesAnywhere(deps.db, [...tokenOf.keys()], MAX_LEAKS_PER_REPORT + 1);
  if (rows.length > MAX_LEAKS_PER_REPORT) throw tooManyLeaks();
  const found = new Map<string, LeakedKeyRow[]>();
  for (const row of rows) {
    const token = tokenOf.get(row.hash) as string;
    found.set(token, [...(found.get(token) ?? []), row]);
  }
  return found;
}

/**
 * The leaks to apply, in report order: each live key of each match, a key reported twice at
 * one place in the same report only once.
 */
function leaksOf(
  matches: readonly ReportedMatch[],
  found: ReadonlyMap<string, readonly LeakedKeyRow[]>,
): { key: LeakedKeyRow; match: ReportedMatch }[] {
  const seen = new Set<string>();
  const out: { key: LeakedKeyRow; match: ReportedMatch }[] = [];
  for (const match of matches) {
    for (const key of found.get(match.token) ?? []) {
      const once = JSON.stringify([key.id, match.source, match.url]);
      if (!key.live || seen.has(once)) continue;
      seen.add(once);
      out.push({ key, match });
    }
  }
  return out;
}
