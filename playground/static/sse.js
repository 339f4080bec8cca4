// Server-sent events over fetch, so that the stream can carry an
// Authorization header (EventSource cannot): a parser of the
// text/event-stream format and a follower that reconnects from the last
// event id.
"use strict";
(function (root) {
  // parser returns a function that takes the stream's text in chunks of any
  // size and calls onEvent({id, event, data}) for each complete event, as
  // the HTML standard's event-stream interpretation says: lines end with
  // CRLF, LF or CR; ":" starts a comment; "field: value" loses one space
  // after the colon; data lines join with "\n"; an event without data is
  // not dispatched; id persists until changed.
  function parser(onEvent) {
    let buf = "";
    let pendingCR = false;
    let data = [];
    let event = "";
    let lastId = "";
    let hasData = false;
    function line(l) {
      if (l === "") {
        if (hasData) onEvent({ id: lastId, event: event || "message", data: data.join("\n") });
        data = [];
        event = "";
        hasData = false;
        return;
      }
      if (l[0] === ":") return;
      const colon = l.indexOf(":");
      const field = colon < 0 ? l : l.slice(0, colon);
      let value = colon < 0 ? "" : l.slice(colon + 1);
      if (value[0] === " ") value = value.slice(1);
      switch (field) {
        case "data":
          data.push(value);
          hasData = true;
          break;
        case "event":
          event = value;
          break;
        case "id":
          if (!value.includes("\0")) lastId = value;
          break;
      }
    }
    return function push(chunk) {
      if (pendingCR && chunk[0] === "\n") chunk = chunk.slice(1);
      pendingCR = false;
      buf += chunk;
      const re = /\r\n|\r|\n/g;
      let start = 0;
      let m;
      while ((m = re.exec(buf)) !== null) {
        if (m[0] === "\r" && m.index === buf.length - 1) {
          pendingCR = true; // a CRLF may be split across chunks
        }
        line(buf.slice(start, m.index));
        start = m.index + m[0].length;
      }
      buf = buf.slice(start);
    };
  }

  // follow reads url as an event stream until signal aborts, reconnecting
  // after a failure (1 s, doubling up to 15 s) from the last event id it
  // saw, passed as ?after=. headers() gives the request headers of each
  // attempt; onEvent gets each parsed event, onState "connecting", "live",
  // "retrying" (with the error) and finally "closed".
  async function follow(url, { headers, after, onEvent, onState, signal }) {
    let last = after || 0;
    let delay = 1000;
    while (!signal.aborted) {
      onState("connecting");
      try {
        const sep = url.includes("?") ? "&" : "?";
        const resp = await fetch(url + sep + "after=" + encodeURIComponent(last), {
          headers: Object.assign({ Accept: "text/event-stream" }, headers()),
          signal,
          cache: "no-store",
        });
        if (!resp.ok) {
          const err = new Error("the event stream answered " + resp.status);
          err.status = resp.status;
          throw err;
        }
        onState("live");
        delay = 1000;
        const push = parser((ev) => {
          const seq = Number(ev.id);
          if (Number.isFinite(seq) && seq > last) last = seq;
          onEvent(ev);
        });
        const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          push(value);
        }
        if (signal.aborted) break;
        onState("retrying", new Error("the event stream ended"));
      } catch (err) {
        if (signal.aborted) break;
        if (err.status === 401 || err.status === 404) {
          onState("closed", err); // retrying cannot help
          return;
        }
        onState("retrying", err);
      }
      await sleep(delay, signal);
      delay = Math.min(delay * 2, 15000);
    }
    onState("closed");
  }

  function sleep(ms, signal) {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      signal.addEventListener("abort", () => {
        clearTimeout(t);
        resolve();
      }, { once: true });
    });
  }

  root.PlaygroundSSE = { parser, follow };
})(globalThis);
