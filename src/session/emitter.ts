import type { EventBody, RuntimeEvent } from "../protocol/events.ts";

export type EventListener = (event: RuntimeEvent) => void;

/**
 * Stamps each event with its envelope (UUID, sequence, ISO time, run id) and
 * hands it to the listeners in order. One emitter per run.
 */
export function createEmitter(
  runId: string,
  listeners: EventListener[],
  options: { startSequence?: number; persist?: ((event: RuntimeEvent) => void) | undefined } = {},
) {
  // A resumed run continues its own numbering.
  let sequence = options.startSequence ?? 0;
  return (body: EventBody): RuntimeEvent => {
    sequence += 1;
    const event = {
      eventId: crypto.randomUUID(),
      sequence,
      timestamp: new Date().toISOString(),
      runId,
      ...body,
    } as RuntimeEvent;
    options.persist?.(event); // before publication: what a client saw is always stored
    for (const listener of listeners) {
      // A failing listener (a closed pipe, a bug in a surface) must not break the
      // run or the event contract: the other listeners still get every event.
      try {
        listener(event);
      } catch {
        // reported by the surface that owns the listener, if it can
      }
    }
    return event;
  };
}
