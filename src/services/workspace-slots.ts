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
}

/** The per-workspace caps of one server, one per kind of heavy request. */
export interface ServerSlots {
  analytics: WorkspaceSlots;
  migrateKeys: WorkspaceSlots;
}
