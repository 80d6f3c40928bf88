/* Following a state pushed by the server (Server-Sent Events): `Live.follow(url, onState)` calls
   onState(state) with the whole state on connect and at every change; the browser reconnects by
   itself after a lost connection (the server sends the whole state again), and this script opens
   a new stream when the browser gives one up (an answer that was not a stream). The page's language
   (?lang=en|zh) is passed on. document.body gets data-version (the state shown) and
   data-received-at and data-rendered-at (when the state arrived and when it was drawn, in ms since
   the epoch): the tests measure journal-to-page latency and its parts with them;
   and a "scoreboard-rendered" event is dispatched on document right after each state is drawn.
   `onTable(running)` (optional) is called with the server's word on the table's program (an
   `event: table` message: true, false, or null when it cannot tell), and with "lost" once the
   connection to the server has been down for LOST_MS (body.stale from the first error on). */
"use strict";
var Live = (function () {
  function withLang(url) {
    var lang = new URLSearchParams(location.search).get("lang");
    return lang ? url + (url.indexOf("?") < 0 ? "?" : "&") + "lang=" + encodeURIComponent(lang) : url;
  }

  var LOST_MS = 5000;  // a server restart or a network blip reconnects within this; longer is news
  // The browser reconnects by itself only after a network error: an answer that is not a stream (a
  // 503 from a full server, a 404 from a floor scoreboard that has not heard of the table yet)
  // closes the EventSource for good, and the page stayed dark until someone reloaded it (a
  // review of the scoreboard's network): a new one is opened after RETRY_MS, doubling to MAX.
  var RETRY_MS = 1000, MAX_RETRY_MS = 30000;

  function follow(url, onState, onTable) {
    var lostTimer = null, retryMs = RETRY_MS;
    function connected() {
      retryMs = RETRY_MS;
      if (lostTimer !== null) { clearTimeout(lostTimer); lostTimer = null; }
    }
    function open() {
      var source = new EventSource(withLang(url));
      source.addEventListener("open", connected);
      source.addEventListener("table", function (ev) {
        connected();
        if (onTable) onTable(JSON.parse(ev.data).running);
      });
      source.addEventListener("state", function (ev) {
        connected();
        var received = performance.timeOrigin + performance.now();
        var state = JSON.parse(ev.data);
        onState(state);
        document.body.classList.remove("stale");
        document.body.setAttribute("data-version", ev.lastEventId);
        document.body.setAttribute("data-received-at", String(received));
        document.body.setAttribute("data-rendered-at", String(performance.timeOrigin + performance.now()));
        document.dispatchEvent(new CustomEvent("scoreboard-rendered", {detail: {version: ev.lastEventId}}));
      });
      source.addEventListener("error", function () {
        document.body.classList.add("stale");
        if (lostTimer === null && onTable) lostTimer = setTimeout(function () { onTable("lost"); }, LOST_MS);
        if (source.readyState === EventSource.CLOSED) {
          setTimeout(open, retryMs);
          retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
        }
      });
    }
    open();
  }

  function text(node, value) {
    node.textContent = value === undefined || value === null ? "" : String(value);
    return node;
  }

  function make(tag, cls, parent, value) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (value !== undefined) text(node, value);
    if (parent) parent.appendChild(node);
    return node;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  return {follow: follow, text: text, make: make, clear: clear, withLang: withLang};
})();
