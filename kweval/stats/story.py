"""The headline's rows in words: plain sentences first, the statistics one click away.

`plain_sentence` says one row of `kweval.stats.headline` as a stakeholder would repeat it ("sentiment finds the
most correct keywords: F1 0.0108 vs 0.0088 for base (+22%); significant."), without a confidence level or a
correction's name; `headline_sentence` says the same comparison with its statistics ("… by 0.0020 (98.3% CI
0.0018–0.0022, Holm) …") for the expander under the card and the report's details; `story_lines` groups the rows
into the card's lines (one per key metric, one per model that leads elsewhere, one for the clearly worse model).

What leading on a metric means comes from `PHRASES` (by registry name, templates included); a metric without a
phrase "leads on <its label>", so a metric registered later reads correctly too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from kweval.data.vocabulary import MOVIE_WORDS, Vocabulary
from kweval.stats.numbers import decimals_for, decimals_for_interval, format_interval, format_level, format_number
from kweval.stats.verdict import ALPHA, format_p

# what leading on a metric means; a second text, when given, is for unranked GT (no keyword is more important)
PHRASES: dict[str, tuple[str, ...]] = {
    "f1": ("finds the most correct keywords",),
    "f1@M": ("finds the most correct keywords",),
    "f1@{k}": ("finds the most correct keywords in its top {k}",),
    "f1@O": ("finds the most correct keywords in its top |GT|",),
    "precision": ("has the largest share of correct keywords among its own",),
    "p@{k}": ("has the most correct keywords in its top {k}",),
    "recall": ("finds the largest share of the GT keywords",),
    "r@{k}": ("finds the largest share of the GT keywords in its top {k}",),
    "w_f1": (
        "finds the most correct keywords when each counts by its confidence and GT importance",
        "finds the most correct keywords when each counts by its confidence",
    ),
    "w_precision": ("puts the most confidence in correct keywords",),
    "w_recall": ("finds the most important GT keywords", "finds the largest share of the GT keywords"),
    "ndcg@{k}": ("ranks the most important GT keywords highest", "ranks correct keywords highest in its top {k}"),
    "ap@{k}": ("ranks its correct keywords earliest",),
    "rr": ("ranks its first correct keyword highest",),
    "sem_f1": ("finds the most keywords close in meaning to the GT",),
    "recall_present": ("finds the most GT keywords that occur in the text",),
    "recall_absent": ("finds the most GT keywords that do not occur in the text",),
    "sas_keywords": ("matches the GT keywords' sentiment best",),
    "sas_text": ("matches the text's sentiment best",),
}


def phrase(metric: str, label: str, words: Vocabulary = MOVIE_WORDS) -> str:
    """What leading on `metric` means in plain words ("leads on <label>" for a metric without a phrase)."""
    for name, texts in PHRASES.items():
        pattern = "^" + re.escape(name).replace(re.escape("{k}"), r"(?P<k>\d+)") + "$"
        found = re.match(pattern, metric)
        if found:
            text = texts[1] if len(texts) > 1 and not words.gt_ranked else texts[0]
            return text.replace("{k}", found.groupdict().get("k") or "k")
    return f"leads on {label}"


def format_relative(relative: float, sign: float = 1.0) -> str:
    """A relative margin as people say it: "+22%", "−51%", "+0.4%" ("" when undefined)."""
    if relative is None or not math.isfinite(relative):
        return ""
    percent = 100.0 * sign * relative
    text = f"{abs(percent):.0f}" if abs(percent) >= 9.5 else f"{abs(percent):.1f}"
    return ("+" if percent >= 0 else "−") + text + "%"


def _values(row: Mapping) -> tuple[str, str]:
    places = decimals_for([row["best_value"], row["runner_up_value"]])
    return format_number(row["best_value"], places), format_number(row["runner_up_value"], places)


def _sure(significant: bool, short: bool = False) -> str:
    if significant:
        return "significant"
    return "not significant" if short else "not significant: the difference may be chance"


def _in_brief(row: Mapping) -> str:
    """ "F1 0.0108 vs 0.0088 for base (+22%)" (a behind row: the worse model's value first, "−51%")."""
    best, other = _values(row)
    if row["kind"] == "behind":
        rel = format_relative(row["relative"], -1.0)
        return f"{row['label']} {other} vs {best}" + (f" ({rel})" if rel else "")
    rel = format_relative(row["relative"])
    return f"{row['label']} {best} vs {other} for {row['runner_up']}" + (f" ({rel})" if rel else "")


def plain_sentence(row: Mapping, words: Vocabulary = MOVIE_WORDS) -> str:
    """One headline row in plain words: who, what it means, both levels, the relative margin, whether it holds."""
    sure = _sure(bool(row["significant"]))
    if row["best_value"] == row["runner_up_value"]:
        return f"{row['best']} and {row['runner_up']} tie on {row['label']}: {_values(row)[0]} each."
    if row["kind"] == "behind":
        return f"{row['runner_up']} is behind {row['best']} on {_in_brief(row)}; {sure}."
    return f"{row['best']} {phrase(row['metric'], row['label'], words)}: {_in_brief(row)}; {sure}."


def story_lines(rows: Sequence[Mapping], words: Vocabulary = MOVIE_WORDS) -> list[dict]:
    """The card's lines ({kind, significant, text}): each key metric's row, then one line per model that leads
    elsewhere (its metrics together), then the clearly worse model's line."""
    lines = [
        {"kind": r["kind"], "significant": bool(r["significant"]), "text": r["plain"]}
        for r in rows
        if r["kind"] == "lead"
    ]
    elsewhere = [r for r in rows if r["kind"] == "elsewhere"]
    for model in dict.fromkeys(r["best"] for r in elsewhere):
        mine = [r for r in elsewhere if r["best"] == model]
        text = (
            mine[0]["plain"]
            if len(mine) == 1
            else f"{model} leads elsewhere: "
            + "; ".join(
                f"{phrase(r['metric'], r['label'], words)} ({_in_brief(r)}, {_sure(bool(r['significant']), True)})"
                for r in mine
            )
            + "."
        )
        lines.append({"kind": "elsewhere", "significant": all(bool(r["significant"]) for r in mine), "text": text})
    behind = [r for r in rows if r["kind"] == "behind"]
    if behind:
        first = behind[0]
        text = (
            f"{first['runner_up']} is clearly behind {first['best']} on every key metric: "
            + ", ".join(_in_brief(r) for r in behind)
            + ("; significant." if len(behind) == 1 else "; each significant.")
        )
        lines.append({"kind": "behind", "significant": True, "text": text})
    return lines


def headline_sentence(row: Mapping, words: Vocabulary = MOVIE_WORDS, alpha: float = ALPHA) -> str:
    """ "On 9,362 reviews, sentiment leads on F1 over base by 0.0020 (98.3% CI 0.0018–0.0022, Holm), significant
    after Holm correction." (the margin and interval with enough decimals never to read 0.000)."""
    places = decimals_for_interval(row["margin"], row["ci_low"], row["ci_high"])
    interval = format_interval(row["ci_low"], row["ci_high"], places, sep="–")
    level = format_level(row["ci_level"])
    verdict = (
        "significant after Holm correction"
        if row["significant"]
        else f"not significant after Holm correction ({format_p(row['p_holm'])})"
    )
    note = f" ({row['note']})" if row.get("note") else ""
    micro = " (micro: ratio of sums)" if row.get("basis") == "ratio of sums (micro)" else ""
    return (
        f"On {words.count(int(row['n']))}, {row['best']} leads on {row['label']}{micro} over {row['runner_up']} by "
        f"{format_number(row['margin'], places)} ({level} CI {interval}, Holm), {verdict}{note}."
    )
