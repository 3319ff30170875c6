/**
 * A cap on the requests of one kind each workspace runs at once on this node. Connections and
 * the database's CPU are shared by every tenant: without a cap, one workspace firing its
 * heaviest requests in parallel (analytics queries, migrations) would hold them all and queue
 * everyone else's behind its own.
 */
export class WorkspaceSlots {
  readonly #running = new Map<string, number>();

  constructor(readonly perWorkspace: number) {}

  /**
   * Takes a slot for `workspaceId`: a function that gives it back (call it once, when the
   * query ends however it ends), or undefined when the workspace holds every slot already.
   */
  take(workspaceId: string): (() => void) | undefined {
    const n = this.#running.get(workspaceId) ?? 0;
    if (n >= this.perWorkspace) return undefined;
    this.#running.set(workspaceId, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#running.get(workspaceId) ?? 1) - 1;
      if (left === 0) this.#running.delete(workspaceId);
      else this.#running.set(workspaceId, left);
    };
  }

  /** Queries of this workspace running now. */
  running(workspaceId: string): number {
    return this.#running.get(workspaceId) ?? 0;
  }
}

const byServer = new WeakMap<object, Map<string, WorkspaceSlots>>();

/**
 * The slots of one kind of request (`kind`) of one server (`server`, its Deps), made with
 * `perWorkspace` on first use.
 */
export function slotsOf(server: object, kind: string, perWorkspace: number): WorkspaceSlots {
  let kinds = byServer.get(server);
  if (!kinds) {
    kinds = new Map();
    byServer.set(server, kinds);
  }
  let slots = kinds.get(kind);
  if (!slots) {
    slots = new WorkspaceSlots(perWorkspace);
    kinds.set(kind, slots);
  }
  return slots;
}
