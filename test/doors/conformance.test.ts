import { beforeAll, describe, expect, it } from "vitest";
import { type ProcedureName, procedures } from "../../src/services/procedures.js";
import { DOORS } from "../harness/doors.js";
import { useServer } from "../harness/server.js";
import { given } from "./given.js";
import { normalise, Placeholders } from "./normalise.js";
import type { Row } from "./row.js";
import { ROWS } from "./rows/index.js";

// Door conformance: behaviour is tested once, through the typed gRPC client
// (test/procedures/); this table shows that the /v2 JSON door and Connect answer every
// procedure the same as gRPC does. Each row runs on every door with a setup of its own (calls
// change state), and the answers, normalised (normalise.ts), must be equal as a whole: status,
// data, pagination, error code, Connect code, title, detail and violations.
// CONFORMANCE_PRINT=1 prints each row's normalised answer, to see what a new row shows.

const s = useServer();
// Through the admin command once, so that the server stops treating itself as an instance of
// one workspace: the setups' workspaces go straight into storage, which tells it nothing.
beforeAll(() => s.seed.workspace());

/** The procedures that have no refusal of their own: no body fields, no root key. */
const NEVER_REFUSED: ProcedureName[] = ["liveness.check"];

const names = Object.keys(procedures) as ProcedureName[];

it("has a successful row and a refused row for every procedure of the contract", () => {
  const missing = (pick: (r: Row) => boolean) =>
    names.filter((n) => !ROWS.some((r) => r.procedure === n && pick(r)));
  expect(missing((r) => r.status === 200)).toEqual([]);
  expect(missing((r) => r.status !== 200)).toEqual(NEVER_REFUSED);
  expect(ROWS.filter((r) => !names.includes(r.procedure)).map((r) => r.procedure)).toEqual([]);
});

/** The row's call on one door, after a setup of its own, normalised. */
async function outcome(row: Row, door: (typeof DOORS)[number]) {
  const known = new Placeholders();
  const g = await given(s, known);
  const { body, auth = g.rootKey } = await row.setup(g);
  const result = await s.call(door, row.procedure, body, auth);
  return { result, normalised: normalise(result, known, s.clock.now()) };
}

describe("every door answers the same", () => {
  it.each(ROWS)("$procedure: $name ($status)", async (row) => {
    const answers = await Promise.all(DOORS.map((door) => outcome(row, door)));
    const [first] = answers;
    if (!first) throw new Error("no doors");
    expect(first.result.status, JSON.stringify(first.result.error)).toBe(row.status);
    expect(first.result.error?.code).toBe(row.code);
    if (row.locations)
      expect(first.result.error?.errors?.map((v) => v.location)).toEqual(row.locations);
    if (process.env.CONFORMANCE_PRINT)
      console.log(row.name, JSON.stringify(first.normalised, null, 1));
    const byDoor = Object.fromEntries(DOORS.map((d, i) => [d, answers[i]?.normalised]));
    expect(byDoor).toEqual(Object.fromEntries(DOORS.map((d) => [d, first.normalised])));
  });
});
