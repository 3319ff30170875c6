import { checkedResources, grantProblem } from "../domain/root-permission-check.js";
import { procedures } from "../services/procedures.js";
import { AdminError } from "./errors.js";

/** Every permission template a procedure checks, always or in one of its cases. */
function templates(): string[] {
  return Object.values(procedures).flatMap((p) => [
    ...(p.permission === undefined ? [] : [p.permission].flat()),
    ...Object.values(p.when ?? {}),
  ]);
}

let resources: ReturnType<typeof checkedResources> | undefined;

/**
 * Refuses a permission no procedure could ever find granted by it (a typo would otherwise
 * make a root key that silently lacks what was meant), naming the nearest one that exists.
 */
export function checkGrantable(permission: string): void {
  resources ??= checkedResources(templates());
  const found = grantProblem(permission, resources);
  if (!found) return;
  const hint = found.suggestion ? `; did you mean ${found.suggestion}?` : "";
  throw new AdminError(`permission '${permission}' ${found.problem}${hint}`);
}
