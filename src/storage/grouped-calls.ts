/** A call waiting for its group's turn. */
interface Waiting<I, R> {
  item: I;
  resolve: (r: R | Promise<R>) => void;
  reject: (err: unknown) => void;
}

interface Group<I, R> {
  running: boolean;
  waiting: Waiting<I, R>[];
}

/**
 * Calls grouped by an id: while one batch of an id is in flight, the calls that arrive for
 * it wait and then go together as the next batch. At low load a call is a batch of one at
 * once; under contention N calls cost about one round trip instead of N serialised ones.
 * `run` answers a batch in its order (an answer may itself be a promise); if it throws,
 * every call of the batch fails with that error.
 */
export class GroupedCalls<I, R> {
  private readonly groups = new Map<string, Group<I, R>>();

  constructor(
    private readonly run: (id: string, items: readonly I[]) => Promise<(R | Promise<R>)[]>,
  ) {}

  call(id: string, item: I): Promise<R> {
    return new Promise((resolve, reject) => {
      let g = this.groups.get(id);
      if (!g) {
        g = { running: false, waiting: [] };
        this.groups.set(id, g);
      }
      g.waiting.push({ item, resolve, reject });
      if (!g.running) void this.drain(id, g);
    });
  }

  private async drain(id: string, g: Group<I, R>): Promise<void> {
    g.running = true;
    while (g.waiting.length > 0) {
      const batch = g.waiting;
      g.waiting = [];
      try {
        const answers = await this.run(
          id,
          batch.map((w) => w.item),
        );
        batch.forEach((w, i) => {
          w.resolve(answers[i] as R | Promise<R>);
        });
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    g.running = false;
    this.groups.delete(id);
  }
}
