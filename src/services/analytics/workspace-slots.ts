/**
 * A cap on the analytics queries each workspace runs at once on this node. The analytics
 * pool is small and shared by every tenant: without a cap, one workspace firing queries in
 * parallel would hold all of its connections and queue everyone else's behind its own.
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
