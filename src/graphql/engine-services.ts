// The use cases the GraphQL resolvers call: the same services as REST, so the two front ends cannot disagree.
import type { CompiledModel } from '../model/compile.js';
import type { ListPages } from '../services/list-pages.js';
import type { ResourceService } from '../services/resource-service.js';
import type { VisibleBatches } from '../services/visible-batches.js';

export interface EngineServices {
  model: CompiledModel;
  services: ResourceService;
  pages: ListPages;
  batches: VisibleBatches;
  /** Signs cursors, as REST's. */
  secret: string;
}
