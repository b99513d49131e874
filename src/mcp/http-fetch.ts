/**
 * The fetch the Streamable HTTP transport uses: every response body passes a byte limit, so a
 * server that sends one endless JSON document or SSE event cannot grow zero's memory without
 * bound. A JSON answer may be at most MAX_HTTP_MESSAGE_BYTES in all; an event stream may run as
 * long as it likes, but no single event may be larger.
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

export const MAX_HTTP_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * Counts the bytes of the SSE event being received; events end at an empty line (`\n\n` or
 * `\r\n\r\n`, whichever way the chunks split them). `push` returns false once an event passes `limit`.
 */
function eventMeter(limit: number) {
  let eventBytes = 0;
  let lineBytes = 0;
  // Whether the line so far is exactly "\r" (the CR of a CRLF blank line, its LF still to come).
  let lineIsCr = false;
  return (chunk: Uint8Array): boolean => {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const length = lineBytes + (newline - start);
      const empty = length === 0 || (length === 1 && (newline > start ? chunk[start] === 13 : lineIsCr));
      if (empty) {
        eventBytes = 0;
      } else {
        eventBytes += length + 1;
        if (eventBytes > limit) return false;
      }
      lineBytes = 0;
      lineIsCr = false;
      start = newline + 1;
    }
    const rest = chunk.length - start;
    if (rest > 0) {
      lineIsCr = lineBytes + rest === 1 && chunk[start] === 13;
      lineBytes += rest;
    }
    return eventBytes + lineBytes <= limit;
  };
}

/** Errors the stream once `limit` is passed: in total (`perEvent` false), or within one SSE event. */
function limitBody(body: ReadableStream<Uint8Array>, limit: number, perEvent: boolean, label: string, onExceeded?: (reason: string) => void): ReadableStream<Uint8Array> {
  let total = 0;
  const withinEvent = perEvent ? eventMeter(limit) : undefined;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        total += chunk.length;
        if (withinEvent ? !withinEvent(chunk) : total > limit) {
          const reason = `${label} sent more than ${limit} bytes in one message; the response was cut off`;
          controller.error(new Error(reason));
          onExceeded?.(reason);
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
}

/**
 * Wraps `base` so every response body is bounded (see above). `onExceeded` hears of a cut: the
 * connection closes then, since a request whose answer was cut would otherwise wait for its timeout.
 */
export function boundedFetch(base: FetchLike, label: string, onExceeded?: (reason: string) => void, limit = MAX_HTTP_MESSAGE_BYTES): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (response.body === null) return response;
    const type = response.headers.get("content-type") ?? "";
    const body = limitBody(response.body, limit, type.includes("text/event-stream"), label, onExceeded);
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
