// Known path templates and their methods: OPTIONS answers with Allow, any other method on a known path is 405 with Allow (RFC 9110 §9.3.7, §15.5.6).

export class RouteTable {
  private readonly routes: Array<{ pattern: RegExp; methods: Set<string> }> = [];
  private readonly byTemplate = new Map<string, Set<string>>();

  add(template: string, methods: string[]): void {
    let set = this.byTemplate.get(template);
    if (!set) {
      set = new Set();
      this.byTemplate.set(template, set);
      const source = template.split('/').map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
      this.routes.push({ pattern: new RegExp(`^${source}$`), methods: set });
    }
    for (const m of methods) set.add(m);
    // HEAD comes with GET, OPTIONS with every path.
    if (set.has('GET')) set.add('HEAD');
    set.add('OPTIONS');
  }

  /** The Allow value for a path, or undefined when no template matches it. */
  allow(path: string): string | undefined {
    const clean = path.split('?')[0]!;
    for (const r of this.routes) if (r.pattern.test(clean)) return [...r.methods].sort().join(', ');
    return undefined;
  }
}
