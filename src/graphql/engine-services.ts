// The use cases the GraphQL resolvers call: the same services as REST, so the two front ends cannot disagree.
import type { CompiledModel } from '../model/compile.js';
import type { ListPages } from '../services/list-pages.js';
import type { ResourceService } from '../services/resource-service.js';
import type { VisibleBatches } from '../services/visible-batches.js';
import type { EventFeed } from '../services/event-feed.js';
import type { ApiVersion } from '../model/versions.js';
import type { StoredEvent } from '../store/types.js';
import type { EventView } from '../model/event-shape.js';

export interface EngineServices {
  model: CompiledModel;
  services: ResourceService;
  pages: ListPages;
  batches: VisibleBatches;
  /** Signs cursors, as REST's. */
  secret: string;
  /** The event feed REST's `/events` reads: where a subscription starts and what it may see. */
  feed: EventFeed;
  /** An event as `/events` renders it (src/events/event-view.ts): a subscription's `Event` shows exactly that. */
  eventView: (event: StoredEvent, version: ApiVersion) => EventView;
}
