"""Every word the scoreboard shows, in English and Chinese: one table per language, so the page
has no text of its own (it prints ``state.json``'s ``labels``).

- ``LANGUAGES``: the languages there are (``en``, ``zh``).
- ``labels(lang) -> dict[str, str]``: every label of ``lang``; ``ValueError`` for another language.
- ``STATE_WORDS``: the table's states (``controller.scoreboard.state``) in words, per language;
  ``labels`` holds them as ``state.<name>``. A wager kind (a paytable's key), a fact of a round
  (``natural``, ``dragon7``, ...) and a round's kind are labels by their own name; a 21 Baccarat
  Bonus rank is ``rank.<rank>``.
- ``journal_problem_text(lang, kind, entry, reason, as_of)``: why the page stopped following the
  table's journal, in ``lang``: ``kind`` ``"failed_check"`` (the chain broke, or an entry no table
  wrote: ``entry`` the one it failed at, None when unknown), ``"unreadable"``, or ``"not_shown"``
  (this program failed to show ``entry``: its defect, not the journal's); ``reason`` in the
  journal's own words (English, as a fault's reason is); ``as_of`` the last entry shown (0: none).
  The page's banner over it is the label ``not_live``.

Chinese follows what players at a baccarat table expect: 庄 Banker, 闲 Player, 和 Tie, 大路 Big
Road, 珠盘路 Bead Plate, 大眼仔 Big Eye Boy, 小路 Small Road, 曱甴路 Cockroach Pig, 庄问路 /
闲问路 banker ask / player ask.
"""
from __future__ import annotations

LANGUAGES = ("en", "zh")

#: The table's states in words (their names: ``controller.scoreboard.state.STATES``).
STATE_WORDS: dict[str, dict[str, str]] = {
    "closed": {"en": "Closed", "zh": "停止营业"},
    "inspection": {"en": "Cards spread for inspection", "zh": "验牌"},
    "shuffling": {"en": "Shuffling", "zh": "洗牌中"},
    "cutting": {"en": "Cutting the cards", "zh": "切牌"},
    "ready_to_load": {"en": "Ready to load the shoe", "zh": "准备装牌"},
    "loading": {"en": "Loading the shoe", "zh": "装牌中"},
    "burning": {"en": "Burning a card", "zh": "烧牌"},
    "betting": {"en": "Place your bets", "zh": "请下注"},
    "no_more_bets": {"en": "No more bets", "zh": "停止下注"},
    "dealing": {"en": "Dealing", "zh": "发牌中"},
    "squeeze": {"en": "Squeeze", "zh": "咪牌中"},
    "house_money": {"en": "House Money", "zh": "庄家钱"},
    "count_fault": {"en": "Closed: card count fault", "zh": "暂停：牌数不符"},
    "fault": {"en": "Play stopped: fault", "zh": "暂停：故障"},
}

_WORDS: dict[str, dict[str, str]] = {
    # results and hands
    "banker": {"en": "Banker", "zh": "庄"},
    "player": {"en": "Player", "zh": "闲"},
    "tie": {"en": "Tie", "zh": "和"},
    "B": {"en": "B", "zh": "庄"},
    "P": {"en": "P", "zh": "闲"},
    "T": {"en": "T", "zh": "和"},
    "player_pair": {"en": "Player pair", "zh": "闲对"},
    "banker_pair": {"en": "Banker pair", "zh": "庄对"},
    "pairs": {"en": "Pairs", "zh": "对子"},
    "natural": {"en": "Natural", "zh": "例牌"},
    "naturals": {"en": "Naturals", "zh": "例牌"},
    "dragon7": {"en": "Dragon 7", "zh": "龙7"},
    "panda8": {"en": "Panda 8", "zh": "熊猫8"},
    "player_bonus": {"en": "Player Bonus", "zh": "闲奖金"},
    "banker_bonus": {"en": "Banker Bonus", "zh": "庄奖金"},
    "bonus_card": {"en": "Bonus card", "zh": "奖金牌"},
    "bonus_rank": {"en": "Bonus", "zh": "奖金"},
    "house_money": {"en": "House Money", "zh": "庄家钱"},
    # 21 Baccarat Bonus ranks (controller.rules.model.BonusRank), as ``rank.<rank>``
    "rank.pair": {"en": "Pair", "zh": "对子"},
    "rank.flush": {"en": "Flush", "zh": "同花"},
    "rank.straight": {"en": "Straight", "zh": "顺子"},
    "rank.three_of_a_kind": {"en": "Three of a kind", "zh": "三条"},
    "rank.straight_flush": {"en": "Straight flush", "zh": "同花顺"},
    "rank.suited_three_of_a_kind": {"en": "Suited three of a kind", "zh": "同花三条"},
    "total": {"en": "Total", "zh": "点数"},
    "wins": {"en": "wins", "zh": "赢"},
    "void": {"en": "Void round", "zh": "无效局"},
    "simulated": {"en": "Simulated round", "zh": "模拟局"},
    # roads
    "bead_plate": {"en": "Bead Plate", "zh": "珠盘路"},
    "big_road": {"en": "Big Road", "zh": "大路"},
    "big_eye_boy": {"en": "Big Eye Boy", "zh": "大眼仔"},
    "small_road": {"en": "Small Road", "zh": "小路"},
    "cockroach_pig": {"en": "Cockroach Pig", "zh": "曱甴路"},
    "ask_banker": {"en": "Banker ask", "zh": "庄问路"},
    "ask_player": {"en": "Player ask", "zh": "闲问路"},
    # panels
    "table": {"en": "Table", "zh": "台号"},
    "shoe": {"en": "Shoe", "zh": "靴"},
    "round": {"en": "Round", "zh": "局"},
    "rounds": {"en": "Rounds", "zh": "局数"},
    "last_round": {"en": "Last round", "zh": "上一局"},
    "shoe_so_far": {"en": "This shoe", "zh": "本靴"},
    "state": {"en": "Table", "zh": "状态"},
    "rules": {"en": "Rules", "zh": "规则"},
    "limits": {"en": "Limits", "zh": "限红"},
    "no_limits": {"en": "Limits: ask the dealer", "zh": "限红：请询问荷官"},
    "table_max": {"en": "All of a seat's wagers", "zh": "每位总限红"},
    "paytable": {"en": "Pays", "zh": "赔率"},
    "commission": {"en": "Commission", "zh": "佣金"},
    "player_commission": {"en": "Commission on Player", "zh": "闲佣金"},
    "banker_commission": {"en": "Commission on Banker", "zh": "庄佣金"},
    "three_card_seven_push": {"en": "wins with three cards totalling 7: push", "zh": "以三张牌7点胜：和局退注"},
    "house_money_either_pair": {"en": "House Money, either hand a pair", "zh": "庄家钱：任一方对子"},
    "house_money_both_pairs": {"en": "House Money, both hands pairs", "zh": "庄家钱：双方对子"},
    "no_commission": {"en": "No commission", "zh": "免佣"},
    "decks": {"en": "Decks", "zh": "副牌"},
    "no_round_yet": {"en": "No round yet", "zh": "尚无牌局"},
    "reason": {"en": "Reason", "zh": "原因"},
    # the floor
    "floor": {"en": "The floor", "zh": "赌场大厅"},
    "offline": {"en": "Offline", "zh": "离线"},
    # the journal failed its check: the banner's title (the table's page) and the tile's (the floor)
    "not_live": {"en": "Not live: the journal failed its check", "zh": "非实时：牌桌日志校验失败"},
    # the table's program is not running, or the page lost the board: its banner, over the last state
    "table_not_running": {"en": "Not live: the table is not running", "zh": "非实时：牌桌未运行"},
    "board_lost": {"en": "Not live: this screen lost the scoreboard", "zh": "非实时：本屏与路单服务器断开"},
    "last_state_shown": {"en": "What is shown is the table's last state; no bets on it.",
                         "zh": "显示的是牌桌的最后状态，请勿据此下注。"},
}

#: The sentences of ``journal_problem_text``; ``{reason}`` stays in the journal's words.
_PROBLEM: dict[str, dict[str, str]] = {
    "failed_check_at": {"en": "the journal failed its check at entry {entry}: {reason}",
                        "zh": "牌桌日志在第{entry}条记录未通过校验：{reason}"},
    "failed_check": {"en": "the journal failed its check: {reason}", "zh": "牌桌日志未通过校验：{reason}"},
    "unreadable": {"en": "the journal cannot be read any more: {reason}",
                   "zh": "牌桌日志已无法读取：{reason}"},
    "not_shown": {"en": "the scoreboard cannot show entry {entry} of the journal (a defect of this program, "
                        "in the scoreboard's log, not of the journal)",
                  "zh": "路单服务器无法显示牌桌日志第{entry}条记录（本程序的缺陷，详见路单服务器日志，并非日志本身的问题）"},
    "as_of": {"en": "; the state shown is as of entry {as_of}", "zh": "；所示为第{as_of}条记录时的状态"},
    "none_shown": {"en": "; none of its entries is shown", "zh": "；未显示其中任何记录"},
}


def labels(lang: str) -> dict[str, str]:
    """Every label in ``lang`` (``en`` or ``zh``): the words above, and each state as
    ``state.<name>``."""
    if lang not in LANGUAGES:
        raise ValueError(f"no labels in {lang!r}: the languages are {', '.join(LANGUAGES)}")
    out = {key: words[lang] for key, words in _WORDS.items()}
    out.update({f"state.{name}": words[lang] for name, words in STATE_WORDS.items()})
    return out


def journal_problem_text(lang: str, kind: str, entry: int | None, reason: str, as_of: int) -> str:
    """Why the journal is not followed any more, in ``lang`` (see the module docstring)."""
    if lang not in LANGUAGES:
        raise ValueError(f"no labels in {lang!r}: the languages are {', '.join(LANGUAGES)}")
    key = kind if kind in ("unreadable", "not_shown") else "failed_check_at" if entry is not None else "failed_check"
    words = {name: sentence[lang] for name, sentence in _PROBLEM.items()}
    return (words[key].format(entry=entry, reason=reason)
            + (words["as_of"].format(as_of=as_of) if as_of else words["none_shown"]))
