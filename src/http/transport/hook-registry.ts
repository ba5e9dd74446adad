// Which request hooks the lean read path stands in for: every lifecycle hook added to the app is seen here, and the path serves a route only if it knows all of that route's hooks.
import type { FastifyInstance, RouteOptions } from 'fastify';

/** The hooks that run for a request; the lean path must do what each of them does, or not serve it. */
const LIFECYCLE = ['onRequest', 'preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend', 'onResponse', 'onError', 'onTimeout', 'onRequestAbort'] as const;

type Hook = (...args: never[]) => unknown;

export class HookRegistry {
  private readonly known = new WeakSet<Hook>();
  /** Lifecycle hooks added to the app (or a plugin) that nobody acknowledged, by name. */
  private readonly unknown: string[] = [];
  private acknowledging = 0;

  /**
   * Wraps `app.addHook`, which plugin contexts inherit, so every hook added from now on is recorded;
   * hooks added inside `acknowledge` are known, any other is not.
   */
  constructor(app: FastifyInstance) {
    const original = app.addHook as unknown as (this: FastifyInstance, name: string, fn: Hook) => FastifyInstance;
    const record = (name: string, fn: Hook): void => {
      if (!(LIFECYCLE as readonly string[]).includes(name)) return;
      if (this.acknowledging > 0) this.known.add(fn);
      else this.unknown.push(name);
    };
    (app as unknown as { addHook: unknown }).addHook = function addHook(this: FastifyInstance, name: string, fn: Hook) {
      record(name, fn);
      return original.call(this, name, fn);
    };
  }

  /**
   * Runs `register`, and counts every hook it adds as one the lean path accounts for. It returns nothing on
   * purpose: a Fastify instance is thenable, and awaiting one here would load pending plugins early.
   */
  async acknowledge(register: () => void | Promise<void>): Promise<void> {
    this.acknowledging++;
    try {
      await register();
    } finally {
      this.acknowledging--;
    }
  }

  /** Marks a route's own hooks as accounted for (the authentication hook of an object read). */
  acknowledgeRoute(route: Partial<Pick<RouteOptions, (typeof LIFECYCLE)[number]>>): void {
    for (const name of LIFECYCLE) for (const fn of [route[name] ?? []].flat() as Hook[]) this.known.add(fn);
  }

  /** Why the lean path may not serve a route with these options, or undefined when it may. */
  refusal(route: Partial<Pick<RouteOptions, (typeof LIFECYCLE)[number]>>): string | undefined {
    if (this.unknown.length > 0) return `unknown app hooks: ${this.unknown.join(', ')}`;
    for (const name of LIFECYCLE) {
      for (const fn of [route[name] ?? []].flat() as Hook[]) if (!this.known.has(fn)) return `an unknown ${name} hook on the route`;
    }
    return undefined;
  }
}
