// What every rule sees: the options, the probe, the discovered collections, shared memoised probes and the write log.
import type { Probe } from './probe.js';
import type { CheckOptions, Evidence, Exchange } from './types.js';

/** A collection found by discovery, with its first page and (when it has items) one item to probe. */
export interface Collection {
  /** The collection's URL without query. */
  url: URL;
  /** `v2` when the path carries a version segment (spec §4 path shapes). */
  version: string | undefined;
  /** The plain GET, no parameters. */
  list: Exchange;
  /** The items of that page. */
  items: unknown[];
  /** One item's URL (its `self` link, or the collection path plus its id), when one was found. */
  item: URL | undefined;
  /** The item field item paths are keyed by (`id` unless an OpenAPI document names another, like `rid`). */
  idField: string;
  /** Fields an OpenAPI document requires in a create body, when one says. */
  createRequired: string[] | undefined;
}

/** Something the checker created with --write, and how to delete it. */
export interface Created {
  url: URL;
  /** Other URLs it may live at (a Location that points elsewhere): deleting tries them in turn. */
  alternates: URL[];
  note: string;
}

export interface Context {
  options: CheckOptions;
  probe: Probe;
  collections: Collection[];
  /** Network trouble during discovery; with no collection found, collection rules report it as `error`. */
  trouble: string | undefined;
  /** Runs `fn` once per key; rules share probes (the 404 sample, OPTIONS) instead of repeating them. */
  once<T>(key: string, fn: () => Promise<T>): Promise<T>;
  /** Objects created with --write: deleted by the runner at the end (each rule deletes its own first). */
  created: Created[];
  /** What deleting showed (status, leftovers). */
  cleanup: Evidence[];
}

export function createContext(options: CheckOptions, probe: Probe, collections: Collection[], trouble: string | undefined): Context {
  const memo = new Map<string, Promise<unknown>>();
  return {
    options,
    probe,
    collections,
    trouble,
    once<T>(key: string, fn: () => Promise<T>): Promise<T> {
      let p = memo.get(key) as Promise<T> | undefined;
      if (p === undefined) memo.set(key, (p = fn()));
      return p;
    },
    created: [],
    cleanup: [],
  };
}
