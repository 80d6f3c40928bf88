/* The one-table page: draws a state object (/tables/<id>/state.json, pushed by /tables/<id>/events)
   into the page. Every word comes from state.labels; the roads from state.roads. Stable hooks for
   the tests: data-road cells (roads.js), ids of the counts (#count-banker, ...), #last-round's
   data-round / data-outcome and its .card elements (data-card, data-to, in deal order), #rules'
   data-limit lines (a wager kind or table_max; "" for "ask the dealer"), #journal-problem (the
   banner over a state whose journal failed its check: shown only then, body.journal-failed),
   #not-live (data-why not_running or lost: the table's program is not running, or the screen lost
   the server; body.not-live). */
"use strict";
(function () {
  var SIZE = {big: 48, bead: 38, derived: 17};
  var COLS = {big: 38, bead: 15, bigEye: 72, small: 35, cockroach: 35};
  var SUITS = {H: "\u2665", D: "\u2666", C: "\u2663", S: "\u2660"};
  var LETTER = {banker: "B", player: "P", tie: "T"};
  var make = Live.make, text = Live.text, clear = Live.clear;
  var $ = function (id) { return document.getElementById(id); };

  function tableId() { return decodeURIComponent(location.pathname.split("/")[2] || ""); }

  function header(s, L) {
    text($("table-name"), (L.table || "") + " " + (s.table || ""));
    $("shoe").setAttribute("data-shoe", s.shoe || "");
    $("shoe").setAttribute("data-round", s.round || 0);
    text($("shoe"), s.shoe ? (L.shoe || "") + " " + s.shoe + (s.round ? "  \u00b7  " + (L.round || "") + " " + s.round : "") : "");
    var st = $("state");
    st.setAttribute("data-state", s.state.name);
    text(st, s.state.text);
    text($("state-reason"), s.state.reason ? (L.reason || "") + ": " + s.state.reason : "");
    document.title = (s.journal_problem ? L.not_live + " \u2014 " : "") +
                     (L.table || "") + " " + (s.table || "") + " \u2014 " + s.state.text;
  }

  // The journal failed its check: the state below is its last good one, frozen, and says so.
  function journalProblem(s, L) {
    var failed = !!s.journal_problem;
    $("journal-problem").hidden = !failed;
    document.body.classList.toggle("journal-failed", failed);
    text($("journal-problem-title"), failed ? L.not_live : "");
    text($("journal-problem-text"), s.journal_problem);
  }

  function roads(s, L) {
    var r = s.roads, at = s.placed;
    text($("h-big-road"), L.big_road); text($("h-bead-plate"), L.bead_plate);
    text($("h-big-eye-boy"), L.big_eye_boy); text($("h-small-road"), L.small_road);
    text($("h-cockroach-pig"), L.cockroach_pig);
    Roads.bigRoad($("big-road"), r.big_road, at.big_road, COLS.big, SIZE.big, L);
    Roads.beadPlate($("bead-plate"), r.bead_plate, COLS.bead, SIZE.bead, L, r.bead_pairs);
    Roads.derived($("big-eye-boy"), "big_eye_boy", r.big_eye_boy, at.big_eye_boy, COLS.bigEye, SIZE.derived);
    Roads.derived($("small-road"), "small_road", r.small_road, at.small_road, COLS.small, SIZE.derived);
    Roads.derived($("cockroach-pig"), "cockroach_pig", r.cockroach_pig, at.cockroach_pig, COLS.cockroach, SIZE.derived);
  }

  function card(code, to, parent) {
    var rank = code.slice(0, -1), suit = code.slice(-1);
    var node = make("div", "card" + (suit === "H" || suit === "D" ? " red" : "") + (/_bonus$/.test(to) ? " bonus" : ""), parent);
    node.setAttribute("data-card", code);
    node.setAttribute("data-to", to);
    make("span", "rank", node, rank);
    make("span", "suit", node, SUITS[suit] || suit);
    return node;
  }

  function lastRound(s, L) {
    var box = clear($("last-round")), d = s.last_round;
    var h = make("h2", "", box, L.last_round);
    box.setAttribute("data-round", d ? d.round : "");
    box.setAttribute("data-outcome", d && d.outcome ? LETTER[d.outcome] || d.outcome : "");
    if (!d) { make("div", "empty", box, L.no_round_yet); return; }
    make("span", "count", h, "  " + (L.round || "") + " " + d.round);
    if (d.kind !== "normal") {
      make("div", "result", box, L[d.kind] || d.kind);
      if (d.reason) make("div", "tag", box, d.reason);
      if (d.kind === "void") return;
    }
    var hands = make("div", "hands", box);
    ["player", "banker"].forEach(function (side) {
      var hand = d[side] || {cards: [], total: ""};
      var el = make("div", "hand " + side + (d.outcome === side ? " won" : ""), hands);
      el.setAttribute("data-hand", side);
      var who = make("div", "who", el);
      make("span", "", who, L[side]);
      make("span", "total", who, hand.total).setAttribute("data-total", hand.total);
      var cards = make("div", "cards", el);
      // the cards of this hand in the order they left the shoe (d.cards is the deal order)
      (d.cards || []).forEach(function (c) { if (c.to === side || c.to === side + "_bonus") card(c.card, c.to, cards); });
    });
    var res = make("div", "result", box);
    var letter = LETTER[d.outcome] || "";
    res.setAttribute("data-result", letter);
    text(res, d.outcome === "tie" ? L.tie : (L[d.outcome] || "") + " " + (L.wins || ""));
    var tags = make("div", "tags", box);
    (s.last_round_facts || []).forEach(function (f) {
      var tag = make("span", "tag" + (f.key === "dragon7" || f.key === "panda8" || /bonus/.test(f.key) ? " gold" : ""), tags,
                     f.text + (f.card ? " " + f.card : "") + (f.rank ? " " + (L["rank." + f.rank] || f.rank) : ""));
      tag.setAttribute("data-fact", f.key);
    });
  }

  function countRow(grid, id, key, value, pct, cls) {
    make("span", "k " + (cls || ""), grid, key);
    make("span", "v " + (cls || ""), grid, value).id = "count-" + id;
    make("span", "pct", grid, pct === undefined ? "" : pct.toFixed(1) + "%").id = pct === undefined ? "" : "pct-" + id;
  }

  function shoeSoFar(s, L) {
    var box = clear($("shoe-so-far")), c = s.shoe_so_far;
    make("h2", "", box, L.shoe_so_far);
    var grid = make("div", "counts", box);
    countRow(grid, "rounds", L.rounds, c.rounds);
    countRow(grid, "banker", L.banker, c.banker, c.percent.banker, "B");
    countRow(grid, "player", L.player, c.player, c.percent.player, "P");
    countRow(grid, "tie", L.tie, c.tie, c.percent.tie, "T");
    var more = make("div", "counts more", box);
    smallCount(more, "banker-pairs", L.banker_pair, c.banker_pairs);
    smallCount(more, "player-pairs", L.player_pair, c.player_pairs);
    smallCount(more, "naturals", L.naturals, c.naturals);
    if (s.game === "ez-baccarat") {
      smallCount(more, "dragon7", L.dragon7, c.dragon7);
      smallCount(more, "panda8", L.panda8, c.panda8);
    }
  }

  function smallCount(grid, id, key, value) {
    if (value === undefined || value === null) return;  // not known to this page (a floor feed carries no naturals)
    make("span", "k", grid, key);
    make("span", "v", grid, value).id = "count-" + id;
  }

  function ask(s, L) {
    var box = clear($("ask"));
    ["banker", "player"].forEach(function (side) {
      var row = make("div", "side " + side, box);
      row.setAttribute("data-ask", side);
      make("span", "badge", row, L[LETTER[side]]);
      make("span", "", row, L["ask_" + side]);
      var marks = make("div", "marks", box);
      marks.setAttribute("data-ask-marks", side);
      ["big_eye_boy", "small_road", "cockroach_pig"].forEach(function (road) {
        marks.appendChild(Roads.askMark(road, s.ask[side][road], 40));
      });
    });
  }

  function line(box, key, value) {
    var row = make("div", "line", box);
    make("span", "k", row, key);
    make("span", "v", row, value);
    return row;
  }

  function rules(s, L) {
    var box = clear($("rules")), r = s.rules;
    make("h2", "", box, L.limits + " \u00b7 " + L.paytable);
    // the table limits by wager (and all of a seat's wagers), in major units; none: ask the dealer
    if (s.limits) Object.keys(s.limits).forEach(function (k) {
      line(box, L[k] || k, s.limits[k].text).setAttribute("data-limit", k);
    });
    else make("div", "game", box, L.no_limits).setAttribute("data-limit", "");
    if (!r) { fitRules(box); return; }
    if (r.name) make("div", "game", box, r.name);
    var pays = make("div", "pays", box);
    Object.keys(r.paytable || {}).forEach(function (k) { line(pays, L[k] || k, r.paytable[k]).setAttribute("data-wager", k); });
    // 21 Baccarat's bonus ranks (labels rank.<rank>), in gold
    Object.keys(r.bonus_paytable || {}).forEach(function (k) {
      var row = line(pays, L["rank." + k] || k, r.bonus_paytable[k]);
      row.classList.add("bonus");
      row.setAttribute("data-rank", k);
    });
    // the commissions, EZ Baccarat's push, House Money's odds: in words by the server (rules_terms)
    (s.rules_terms || []).forEach(function (t) { line(box, t.label, t.text).setAttribute("data-term", t.key); });
    fitRules(box);
  }

  // The panel's text is made smaller, a step at a time, until every line fits in it: with a limit
  // on every wager its paytable and commission were cut off below it (a review of the
  // scoreboard). The panel's data-fit says the factor; under MIN_FIT a line may still be cut off.
  var MIN_FIT = 0.5;
  function fitRules(box) {
    var fit = 1;
    box.style.setProperty("--fit", "1");
    while (fit > MIN_FIT && (box.scrollHeight > box.clientHeight || box.scrollWidth > box.clientWidth)) {
      fit = Math.round((fit - 0.05) * 100) / 100;
      box.style.setProperty("--fit", String(fit));
    }
    box.setAttribute("data-fit", String(fit));
  }

  // Not live: the table's program is not running (the server says so), or this screen lost the
  // server (Live.follow's "lost"): a banner over the last state, dimmed, until a state or the
  // server's word that the table runs again. The words are the last state's labels.
  var labelsShown = {}, tableWord = null;

  function notLive(word) {
    if (word !== undefined) tableWord = word;
    var L = labelsShown, down = tableWord === false || tableWord === "lost";
    $("not-live").hidden = !down;
    document.body.classList.toggle("not-live", down);
    $("not-live").setAttribute("data-why", down ? (tableWord === false ? "not_running" : "lost") : "");
    text($("not-live-title"), down ? (tableWord === false ? L.table_not_running : L.board_lost) : "");
    text($("not-live-text"), down ? L.last_state_shown : "");
  }

  function render(s) {
    var L = s.labels || {};
    labelsShown = L;
    if (tableWord === "lost") tableWord = null;  // a state came: the server is back
    header(s, L);
    roads(s, L);
    lastRound(s, L);
    shoeSoFar(s, L);
    ask(s, L);
    rules(s, L);
    journalProblem(s, L);
    notLive();
  }

  // The page is laid out for 1920x1080 and scaled to the screen it is on, whole: on a 1280x720
  // or a portrait screen the newest big-road columns and the state were cut off (a review of
  // the scoreboard). body[data-scale] says the factor.
  function fit() {
    var scale = Math.min(window.innerWidth / 1920, window.innerHeight / 1080);
    if (!(scale > 0)) return;
    document.body.style.transform = scale === 1 ? "" : "scale(" + scale + ")";
    document.body.setAttribute("data-scale", String(Math.round(scale * 1000) / 1000));
  }

  document.addEventListener("DOMContentLoaded", function () {
    fit();
    window.addEventListener("resize", fit);
    Live.follow("/tables/" + encodeURIComponent(tableId()) + "/events", render, notLive);
  });
})();
