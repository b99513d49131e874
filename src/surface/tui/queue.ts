/**
 * Messages typed while a run is active wait here, first in first out, and run one after another
 * in the same conversation once it ends. Bounded: a full queue refuses the next message (the
 * composer keeps it) rather than growing without end. Changes happen in place (Solid's
 * `produce` wraps them in the app; tests use plain objects).
 */

export const MAX_QUEUED = 20;

export type QueuedMessage = { id: number; text: string; attachments: string[] };
export type MessageQueue = { items: QueuedMessage[]; serial: number };

export function emptyQueue(): MessageQueue {
  return { items: [], serial: 0 };
}

/** Adds a message at the end; false (nothing added) when the queue is full. */
export function enqueue(queue: MessageQueue, text: string, attachments: string[] = []): boolean {
  if (queue.items.length >= MAX_QUEUED) return false;
  queue.items.push({ id: ++queue.serial, text, attachments });
  return true;
}

export function removeQueued(queue: MessageQueue, id: number): QueuedMessage | undefined {
  const index = queue.items.findIndex((item) => item.id === id);
  return index === -1 ? undefined : queue.items.splice(index, 1)[0];
}

export function editQueued(queue: MessageQueue, id: number, text: string): void {
  const item = queue.items.find((candidate) => candidate.id === id);
  if (item) item.text = text;
}

/** Moves a message one place earlier (-1) or later (+1); at an end it stays. */
export function moveQueued(queue: MessageQueue, id: number, by: -1 | 1): void {
  const index = queue.items.findIndex((item) => item.id === id);
  const target = index + by;
  if (index === -1 || target < 0 || target >= queue.items.length) return;
  const [item] = queue.items.splice(index, 1);
  queue.items.splice(target, 0, item!);
}
