// The shape of an event as clients see it (DESIGN §9): REST's /events and webhooks render it (src/events/event-view.ts), GraphQL's subscriptions show it.
export interface EventView {
  id: string;
  type: string;
  sequence: number;
  created_at: string;
  api_version: string;
  data: { object: Record<string, unknown> };
  previous_attributes?: Record<string, unknown>;
}
