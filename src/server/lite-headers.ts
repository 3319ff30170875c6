/**
 * A Headers-compatible bag that costs almost nothing until it is used as a real
 * `Headers`. undici's Headers validates every name and value on construction; a call
 * through the /v2 or grpc-js door reads one or two request headers and sets one
 * response header, so those doors use this instead. Names are case-insensitive.
 */
export class LiteHeaders {
  private readonly map = new Map<string, string>();

  /** Headers from a Node header record; HTTP/2 pseudo-headers (`:path`) are left out. */
  static fromNode(raw: Record<string, string | string[] | undefined>): LiteHeaders {
    const h = new LiteHeaders();
    for (const name in raw) {
      const v = raw[name];
      if (v === undefined || name.charCodeAt(0) === 58) continue;
      h.map.set(name, Array.isArray(v) ? v.join(", ") : v);
    }
    return h;
  }

  get(name: string): string | null {
    return this.map.get(name.toLowerCase()) ?? null;
  }
  has(name: string): boolean {
    return this.map.has(name.toLowerCase());
  }
  set(name: string, value: string): void {
    this.map.set(name.toLowerCase(), String(value));
  }
  append(name: string, value: string): void {
    const key = name.toLowerCase();
    const prev = this.map.get(key);
    this.map.set(key, prev === undefined ? String(value) : `${prev}, ${value}`);
  }
  delete(name: string): void {
    this.map.delete(name.toLowerCase());
  }
  getSetCookie(): string[] {
    const v = this.map.get("set-cookie");
    return v === undefined ? [] : [v];
  }
  forEach(fn: (value: string, key: string, parent: Headers) => void): void {
    for (const [k, v] of this.map) fn(v, k, this as unknown as Headers);
  }
  entries(): IterableIterator<[string, string]> {
    return this.map.entries();
  }
  keys(): IterableIterator<string> {
    return this.map.keys();
  }
  values(): IterableIterator<string> {
    return this.map.values();
  }
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.map.entries();
  }
  /** The headers as a plain record, for writing a Node response. */
  toRecord(): Record<string, string> {
    return Object.fromEntries(this.map);
  }

  /** This bag typed as fetch Headers, for Connect's interfaces. */
  asHeaders(): Headers {
    return this as unknown as Headers;
  }
}
