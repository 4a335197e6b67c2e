// A bounded map in two generations, for the runtime's content-addressed caches (Python: runtime/cache.py).
//
// Lookups hit the young generation, then the old one (promoting the entry). When adding an entry would take the
// young generation past `maxWeight`, it becomes the old one and the previous old one is dropped. Callers give each
// entry a weight, so memory stays within about twice `maxWeight` whatever mix of entries arrives.

export class GenerationalCache<K, V> {
  young = new Map<K, V>();
  old = new Map<K, V>();
  private youngWeight = 0;

  constructor(
    readonly maxWeight: number,
    private readonly weigh: (key: K, value: V) => number,
  ) {}

  get(key: K): V | undefined {
    const value = this.young.get(key);
    if (value !== undefined) return value;
    const older = this.old.get(key);
    if (older !== undefined) this.put(key, older);
    return older;
  }

  /** Add an entry; `size` is its weight when the caller knows it (else `weigh`). */
  put(key: K, value: V, size?: number): void {
    const weight = size ?? this.weigh(key, value);
    if (this.youngWeight + weight > this.maxWeight) {
      this.old = this.young;
      this.young = new Map();
      this.youngWeight = 0;
    }
    if (!this.young.has(key)) {
      this.young.set(key, value);
      this.youngWeight += weight;
    }
  }

  get size(): number {
    return this.young.size + this.old.size;
  }
}
