import type { Logger } from "../log.js";
import type { Queryable } from "../storage/db.js";
import { workspaceSole } from "../storage/queries/workspaces.js";
import type { InvalidationBus } from "./bus.js";

/**
 * Whether the instance holds exactly one workspace, and which: a verification without root
 * key and without API is scoped to it, and refused on an instance of several. Read once at
 * start-up, then held in memory (a verification pays nothing for it). Afterwards the answer
 * can only be withdrawn, never set: when a workspace is created (on any node) and when a
 * missed notification makes the node read again. Workspaces are never removed, so a stale
 * answer is the one workspace there was: it narrows a lookup to that workspace and can
 * never widen one.
 */
export class SoleWorkspace {
  #id: string | undefined;
  #withdrawn = false;

  constructor(
    private readonly db: Queryable,
    bus: InvalidationBus,
    private readonly log: Logger,
  ) {
    bus.subscribe((e) => {
      if (e.kind === "workspaces") this.withdraw();
      else if (e.kind === "all") void this.recheck();
    });
  }

  /** The instance's only workspace; undefined when it holds several (or before `load`). */
  get id(): string | undefined {
    return this.#id;
  }

  /** Reads the workspaces; at start-up, after the default workspace exists. */
  async load(): Promise<void> {
    const id = await workspaceSole(this.db);
    if (!this.#withdrawn) this.#id = id;
  }

  private withdraw(): void {
    this.#withdrawn = true;
    this.#id = undefined;
  }

  /** Notifications may have been missed: withdraws the answer if a workspace was added. */
  private async recheck(): Promise<void> {
    const held = this.#id;
    if (held === undefined) return;
    try {
      if ((await workspaceSole(this.db)) !== held) this.withdraw();
    } catch (err) {
      // The answer held names one workspace: keeping it never widens a lookup.
      this.log.warn({ code: (err as { code?: unknown }).code }, "could not recount the workspaces");
    }
  }
}
