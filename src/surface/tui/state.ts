/**
 * The TUI's first state. Apart from controller.ts so the view bundle can make one without loading
 * the controller's dependencies (config schemas, providers): the screen opens before them.
 */
import type { TuiState } from "./controller.ts";
import { emptyHistory } from "./history.ts";
import { emptyQueue } from "./queue.ts";
import { emptyTimeline } from "./timeline.ts";

export function initialState(sessionId: string, sent: string[] = []): TuiState {
  return { sessionId, timeline: emptyTimeline(), queue: emptyQueue(), history: emptyHistory(sent), choices: {}, approvals: [], started: false, running: false, quitting: false };
}
