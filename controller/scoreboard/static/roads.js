/* Drawing the roads of a state object (the roads exactly as `shoectl roadmap --json` gives them)
   as SVG, each cell where the state's `placed` puts it (controller/roadmaps `fold`: six rows,
   dragon tails turning right; the page does no placing of its own).
   Every cell carries its logical place and content as data-* attributes (the tests read them);
   each drawing replaces the road's previous nodes, so the page never grows. */
"use strict";
var Roads = (function () {
  var NS = "http://www.w3.org/2000/svg";
  var ROWS = 6;

  function el(name, attrs, parent) {
    var node = document.createElementNS(NS, name);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(node);
    return node;
  }

  /* The cells of a road: its logical columns paired with their places on screen, [x, y] in logical
     order as the state gives them (state.placed, from controller/roadmaps `fold`): [{x, y, col, row, item}]. */
  function cellsOf(columns, places) {
    var cells = [], k = 0;
    columns.forEach(function (column, c) {
      column.forEach(function (item, r) {
        var at = places[k++];
        if (at) cells.push({x: at[0], y: at[1], col: c, row: r, item: item});
      });
    });
    return cells;
  }

  /* An empty road: a grid `cols` wide, cells of `size` px, showing the last columns drawn. */
  function canvas(svg, cols, size, lastX) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var first = Math.max(0, lastX - cols + 2);   // keep one empty column after the last mark
    svg.setAttribute("width", cols * size + 1);
    svg.setAttribute("height", ROWS * size + 1);
    svg.setAttribute("viewBox", (first * size - 0.5) + " -0.5 " + (cols * size + 1) + " " + (ROWS * size + 1));
    var grid = el("g", {"class": "grid"}, svg);
    for (var i = 0; i <= cols; i++) {
      var gx = (first + i) * size;
      el("line", {x1: gx, y1: 0, x2: gx, y2: ROWS * size}, grid);
    }
    for (var j = 0; j <= ROWS; j++) el("line", {x1: first * size, y1: j * size, x2: (first + cols) * size, y2: j * size}, grid);
    return el("g", {}, svg);
  }

  function lastX(cells) { return cells.reduce(function (m, c) { return Math.max(m, c.x); }, -1); }

  function pairDots(g, cx, cy, r, playerPair, bankerPair) {
    if (bankerPair) el("circle", {"class": "pair-B", cx: cx - r * 0.7, cy: cy - r * 0.7, r: Math.max(3, r * 0.28)}, g);
    if (playerPair) el("circle", {"class": "pair-P", cx: cx + r * 0.7, cy: cy + r * 0.7, r: Math.max(3, r * 0.28)}, g);
  }

  /* The big road: hollow circles, a green slash for ties with their count above one, pair dots. */
  function bigRoad(svg, columns, places, cols, size, labels) {
    var cells = cellsOf(columns, places);
    var layer = canvas(svg, cols, size, lastX(cells));
    layer.setAttribute("data-road", "big");
    cells.forEach(function (c) {
      var e = c.item, cx = (c.x + 0.5) * size, cy = (c.y + 0.5) * size, r = size * 0.38;
      var g = el("g", {"class": "cell", "data-col": c.col, "data-row": c.row, "data-x": c.x, "data-y": c.y,
                       "data-result": e.outcome, "data-ties": e.ties, "data-player-pair": e.player_pair ? 1 : 0,
                       "data-banker-pair": e.banker_pair ? 1 : 0}, layer);
      el("circle", {"class": e.outcome + " hollow", cx: cx, cy: cy, r: r, "stroke-width": size * 0.11}, g);
      if (e.ties > 0) {
        el("line", {"class": "tie-line", x1: cx + r, y1: cy - r, x2: cx - r, y2: cy + r, "stroke-width": size * 0.08}, g);
        if (e.ties > 1) el("text", {"class": "tie-count", x: cx, y: cy, "font-size": size * 0.5}, g).textContent = e.ties;
      }
      pairDots(g, cx, cy, r, e.player_pair, e.banker_pair);
    });
    return cells.length;
  }

  /* The bead plate: filled circles with the result's letter in the page's language. */
  /* The bead plate: every result in order, with its pair dots (pairs[i]: "", "P", "B" or "PB";
     a tie's pairs are on this road only). */
  function beadPlate(svg, results, cols, size, labels, pairs) {
    var cells = results.map(function (r, i) { return {x: Math.floor(i / ROWS), y: i % ROWS, item: r, index: i}; });
    var layer = canvas(svg, cols, size, lastX(cells));
    layer.setAttribute("data-road", "bead");
    cells.forEach(function (c) {
      var cx = (c.x + 0.5) * size, cy = (c.y + 0.5) * size, pair = (pairs && pairs[c.index]) || "";
      var g = el("g", {"class": "cell", "data-index": c.index, "data-result": c.item, "data-pairs": pair}, layer);
      el("circle", {"class": c.item, cx: cx, cy: cy, r: size * 0.44}, g);
      el("text", {x: cx, y: cy, "font-size": size * 0.5}, g).textContent = labels[c.item] || c.item;
      pairDots(g, cx, cy, size * 0.44, pair.indexOf("P") >= 0, pair.indexOf("B") >= 0);
    });
    return cells.length;
  }

  /* One mark of a derived road, in its road's style, centred on (cx, cy). */
  function mark(g, style, colour, cx, cy, size) {
    var r = size * 0.36;
    if (style === "big_eye_boy") el("circle", {"class": colour + " hollow", cx: cx, cy: cy, r: r, "stroke-width": size * 0.16}, g);
    else if (style === "small_road") el("circle", {"class": colour, cx: cx, cy: cy, r: r}, g);
    else el("line", {"class": colour, x1: cx + r, y1: cy - r, x2: cx - r, y2: cy + r, "stroke-width": size * 0.2,
                     "stroke-linecap": "round"}, g);
  }

  /* Big eye boy, small road or cockroach pig. */
  function derived(svg, name, columns, places, cols, size) {
    var cells = cellsOf(columns, places);
    var layer = canvas(svg, cols, size, lastX(cells));
    layer.setAttribute("data-road", name);
    cells.forEach(function (c) {
      var g = el("g", {"class": "cell", "data-col": c.col, "data-row": c.row, "data-x": c.x, "data-y": c.y,
                       "data-colour": c.item}, layer);
      mark(g, name, c.item, (c.x + 0.5) * size, (c.y + 0.5) * size, size);
    });
    return cells.length;
  }

  /* A small standalone mark (the ask indicators): an svg of one cell, or an empty one. */
  function askMark(name, colour, size) {
    var svg = el("svg", {"class": "road", width: size, height: size, viewBox: "0 0 " + size + " " + size,
                         "data-ask-road": name, "data-colour": colour || ""});
    if (colour) mark(svg, name, colour, size / 2, size / 2, size);
    return svg;
  }

  return {bigRoad: bigRoad, beadPlate: beadPlate, derived: derived, askMark: askMark, ROWS: ROWS};
})();
