import type { EventBody, RuntimeEvent } from "../protocol/events.ts";

export type EventListener = (event: RuntimeEvent) => void;

/**
 * Stamps each event with its envelope (UUID, sequence, ISO time, run id) and
 * hands it to the listeners in order. One emitter per run.
 */
export function createEmitter(runId: string, listeners: EventListener[]) {
  let sequence = 0;
  return (body: EventBody): RuntimeEvent => {
    sequence += 1;
    const event = {
      eventId: crypto.randomUUID(),
      sequence,
      timestamp: new Date().toISOString(),
      runId,
      ...body,
    } as RuntimeEvent;
    for (const listener of listeners) listener(event);
    return event;
  };
}
