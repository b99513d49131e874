import type { EventBody, RuntimeEvent } from "../protocol/events.ts";

export type EventListener = (event: RuntimeEvent) => void;

export type EmitterOptions = {
  /** A resumed run continues its own numbering. */
  startSequence?: number;
  /** Writes the event to the store; runs before any listener sees it. */
  persist?: ((event: RuntimeEvent) => void) | undefined;
  /** Rewrites a body into the bodies actually emitted (redaction holds and releases streamed text). */
  transform?: (body: EventBody) => EventBody[];
  /** Extra envelope fields (a child run's parentRunId and rootRunId). */
  stamp?: Record<string, string>;
};

/**
 * Stamps each event with its envelope (UUID, sequence, ISO time, run id) and
 * hands it to the listeners in order. One emitter per run.
 */
export function createEmitter(runId: string, listeners: EventListener[], options: EmitterOptions = {}) {
  let sequence = options.startSequence ?? 0;
  const publish = (body: EventBody): void => {
    sequence += 1;
    const event = {
      eventId: crypto.randomUUID(),
      sequence,
      timestamp: new Date().toISOString(),
      runId,
      ...options.stamp,
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
  };
  return (body: EventBody): void => {
    if (!options.transform) return publish(body);
    for (const out of options.transform(body)) publish(out);
  };
}
