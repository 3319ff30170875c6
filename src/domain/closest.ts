/** The number of one-character insertions, deletions and substitutions that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        substitution,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/**
 * The candidate nearest to `word` ("did you mean ...?"), the first of equals in the given
 * order; undefined when there are none, or when the nearest is further than `maxDistance`.
 */
export function closest(
  word: string,
  candidates: Iterable<string>,
  maxDistance = Number.POSITIVE_INFINITY,
): string | undefined {
  let best: string | undefined;
  let bestDistance = maxDistance + 1;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}
