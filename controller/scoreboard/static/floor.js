/* The floor page: every table of the scoreboard's source (/floor.json, pushed by /events), each
   a tile with its state, last result and big road, linking to its own page; a table whose journal
   failed its check is marked (.failed, its .problem in words). */
"use strict";
(function () {
  var make = Live.make, text = Live.text, clear = Live.clear;
  var LETTER = {banker: "B", player: "P", tie: "T"};

  function render(floor) {
    var L = floor.labels || {};
    var box = clear(document.getElementById("tables"));
    document.title = L.floor || document.title;
    (floor.tables || []).forEach(function (t) {
      var tile = make("a", "tile", box);
      tile.href = Live.withLang("/tables/" + encodeURIComponent(t.table));
      tile.setAttribute("data-table", t.table);
      if (t.online === false) tile.classList.add("offline");
      if (t.journal_problem) tile.classList.add("failed");
      var head = make("div", "head", tile);
      make("span", "", head, (L.table || "") + " " + t.table);
      if (t.shoe) make("span", "shoe", head, t.shoe);
      if (t.online === false) make("span", "offline", head, L.offline);
      var st = make("span", "state", head, t.state ? t.state.text : "");
      st.setAttribute("data-state", t.state ? t.state.name : "");
      if (t.journal_problem) {
        var problem = make("div", "problem", tile);
        make("b", "", problem, L.not_live);
        make("span", "", problem, t.journal_problem);
      }
      var last = make("div", "last", tile, (L.last_round || "") + ": ");
      var letter = LETTER[t.last_result] || "";
      var b = make("b", "", last, t.last_result ? L[t.last_result] || t.last_result : "\u2014");
      b.setAttribute("data-result", letter);
      var svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
      svg.setAttribute("class", "road");
      tile.appendChild(svg);
      Roads.bigRoad(svg, t.big_road || [], t.big_road_placed || [], 30, 19, L);
    });
    if (!(floor.tables || []).length) make("div", "empty", box, "\u2014");
  }

  document.addEventListener("DOMContentLoaded", function () { Live.follow("/events", render); });
})();
