"""`kweval gap`'s answers as text, Markdown or JSON: the sentence first, then the numbers behind it.

A gap (`kweval.lattice.gap.Gap.as_dict`) shows both protocols' values, each differing convention with
both settings, its contribution and what the settings mean (`kweval.keyphrase.conventions`), then the
documents that move most.  A reported-number search (`kweval.lattice.search.reported_search`) shows its
matches grouped by value: the settings they share, those this data cannot tell apart, the presets
among them.  Strings from the data (document ids, model names) are escaped (`kweval.messages.shown`,
`kweval.io.report.escape_markdown`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from kweval.io.report import escape_markdown
from kweval.keyphrase.conventions import BY_NAME
from kweval.lattice.gap import metric_label, signed
from kweval.messages import shown
from kweval.stats.numbers import format_number

FORMATS = ("text", "markdown", "json")


def render(result: Mapping[str, object], fmt: str) -> str:
    """A gap or a reported-number search in `fmt` (text, markdown, json)."""
    if fmt == "json":
        return json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False, default=_finite) + "\n"
    reported = "reported" in result
    if fmt == "markdown":
        return reported_markdown(result) if reported else gap_markdown(result)
    return reported_text(result) if reported else gap_text(result)


def _finite(value: object) -> object:
    raise TypeError(f"not JSON: {value!r}")


def _n(x: object) -> str:
    return format_number(float(x), 4)  # type: ignore[arg-type]


def _meaning(factor: Mapping[str, object]) -> str:
    convention = BY_NAME[str(factor["factor"])]
    return f"{convention.label}: {factor['from']} = {convention.settings[str(factor['from'])]}; " + (
        f"{factor['to']} = {convention.settings[str(factor['to'])]}"
    )


def gap_text(gap: Mapping) -> str:
    """The gap as plain text."""
    start, end = gap["from"], gap["to"]
    width = max(len(start["protocol"]), len(end["protocol"]), 8)
    lines = [
        gap["sentence"],
        "",
        f"model {shown(gap['model'])}, {metric_label(gap['metric'])} over {gap['n_documents']} documents:",
        f"  {start['protocol']:<{width}}  {_n(start['value'])}",
        f"  {end['protocol']:<{width}}  {_n(end['value'])}",
        f"  {'gap':<{width}}  {signed(gap['gap'])}",
        "",
    ]
    heads = ["convention", start["protocol"], end["protocol"]]
    keys = ("factor", "from", "to")
    cols = [max([len(h), *(len(str(f[key])) for f in gap["factors"])]) + 2 for h, key in zip(heads, keys)]
    lines.append("".join(f"{h:<{w}}" for h, w in zip(heads, cols)) + f"{'contribution':>14}")
    for f in gap["factors"]:
        cells = "".join(f"{f[key]:<{w}}" for key, w in zip(keys, cols))
        lines.append(f"{cells}{signed(f['contribution']):>14}")
    lines += ["", "what the settings mean:"] + [f"  {_meaning(f)}" for f in gap["factors"] if f["contribution"]]
    if gap["documents"]:
        lines += ["", f"documents that move most ({metric_label(gap['metric'])} of each document, from → to):"]
        for d in gap["documents"]:
            moved = f"  moved most by {d['convention']}" if d["convention"] else ""
            lines.append(f"  {shown(d['id']):<24}{_n(d['from'])} → {_n(d['to'])}{moved}")
    return "\n".join(lines) + "\n"


def gap_markdown(gap: Mapping) -> str:
    """The gap as Markdown (strings from the data escaped)."""
    start, end = gap["from"], gap["to"]
    out = [
        f"### {metric_label(gap['metric'])} of {escape_markdown(shown(gap['model']))}: {start['protocol']} → "
        f"{end['protocol']}",
        "",
        escape_markdown(gap["sentence"]),
        "",
        f"| protocol | {metric_label(gap['metric'])} |",
        "| --- | ---: |",
        f"| {start['protocol']} | {_n(start['value'])} |",
        f"| {end['protocol']} | {_n(end['value'])} |",
        f"| gap | {signed(gap['gap'])} |",
        "",
        f"| convention | {start['protocol']} | {end['protocol']} | contribution | what the settings mean |",
        "| --- | --- | --- | ---: | --- |",
    ]
    for f in gap["factors"]:
        out.append(
            f"| {f['factor']} | {f['from']} | {f['to']} | {signed(f['contribution'])} | "
            f"{escape_markdown(_meaning(f))} |"
        )
    if gap["documents"]:
        out += ["", "| document | from | to | moved most by |", "| --- | ---: | ---: | --- |"]
        for d in gap["documents"]:
            out.append(
                f"| {escape_markdown(shown(d['id']))} | {_n(d['from'])} | {_n(d['to'])} | {d['convention'] or ''} |"
            )
    return "\n".join(out) + "\n"


def _group_line(group: Mapping) -> str:
    fixed = ", ".join(f"{n}={v}" for n, v in group["fixed"].items())
    free = "; any of " + ", ".join(f"{n}={'|'.join(v)}" for n, v in group["free"].items()) if group["free"] else ""
    presets = f" (= {', '.join(group['presets'])})" if group["presets"] else ""
    return f"{metric_label(group['metric'])} {format_number(group['value'], 6)}{presets}: {fixed or 'any'}{free}"


def reported_summary(result: Mapping) -> str:
    """The answer in one sentence."""
    metric = metric_label(str(result["metric"]))
    groups: Sequence[Mapping] = result["groups"]
    if not groups:
        nearest = result["closest"][0] if result["closest"] else None
        near = f"; the nearest is {format_number(nearest['value'], 6)}" if nearest else ""
        return (
            f"No combination of the presets' conventions gives {metric} = {result['reported']}{_read_as(result)} on "
            f"this data ({result['n_combinations']} tried){near}."
        )
    presets = list(dict.fromkeys(p for g in groups for p in g["presets"]))
    named = f", among them the {', '.join(presets)} preset{'s' if len(presets) > 1 else ''}" if presets else ""
    return (
        f"{len(result['matches'])} of {result['n_combinations']} combinations of the presets' conventions give "
        f"{metric} = {result['reported']}{_read_as(result)} on this data, in {len(groups)} distinct "
        f"value{'s' if len(groups) > 1 else ''}{named}."
    )


def _read_as(result: Mapping) -> str:
    """How a percentage was read (" (0.314 as a fraction)"); "" for a fraction."""
    given = str(result["reported"]).removesuffix("%").strip()
    return "" if float(given) == result["value"] else f" (read as {float(result['value']):.10g})"


def reported_text(result: Mapping) -> str:
    """A reported-number search as plain text: the answer, then each matching value's settings."""
    lines = [reported_summary(result), ""]
    groups = result["groups"] or result["closest"]
    lines.append("matches, nearest first:" if result["groups"] else "nearest combinations:")
    lines += [f"  {_group_line(g)}" for g in groups]
    lines += [
        "",
        f"conventions searched: {', '.join(result['conventions']) or 'none'} (the others change nothing here)",
    ]
    return "\n".join(lines) + "\n"


def reported_markdown(result: Mapping) -> str:
    """A reported-number search as Markdown."""
    out = [f"### {metric_label(str(result['metric']))} = {escape_markdown(str(result['reported']))}", ""]
    out += [escape_markdown(reported_summary(result)), "", "| value | presets | settings | also any of |"]
    out.append("| ---: | --- | --- | --- |")
    for g in result["groups"] or result["closest"]:
        fixed = ", ".join(f"{n}={v}" for n, v in g["fixed"].items())
        free = "; ".join(f"{n}={'/'.join(v)}" for n, v in g["free"].items())
        out.append(f"| {format_number(g['value'], 6)} | {', '.join(g['presets'])} | {fixed} | {free} |")
    return "\n".join(out) + "\n"
