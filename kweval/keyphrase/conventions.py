"""The conventions of a keyphrase protocol, each defined once: its name, what it decides, its settings.

Every tool of the field computes "F1@5" under its own choices (docs/protocols.md).  Each choice is a
`Convention` of `CONVENTIONS`, with a sentence per setting; a protocol is one setting of each, and the
four presets are four such combinations (`PRESET_SETTINGS`, `preset_settings`).  Any other combination
is a protocol too, scored by the same `kweval.keyphrase.protocols.score_documents`: this is what lets
`kweval gap` move from one preset to another one convention at a time.  docs/protocols.md, the protocol
card, `kweval gap` and the dashboard's Protocols page take every name and sentence from here.

Plain Python (the `--protocol` command imports this without numpy).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# Which metrics a convention can move: every metric, the P@k cut-offs (not @M), the F1s, or the present/absent split.
MOVES_ALL, MOVES_CUTOFF, MOVES_F1, MOVES_PRESENT = "all", "cutoff", "f1", "present"


@dataclass(frozen=True)
class Convention:
    """One choice a protocol makes: `decides` what, among `settings` (each with its sentence)."""

    name: str
    label: str
    decides: str
    settings: Mapping[str, str]
    moves: str = MOVES_ALL

    def sentence(self, setting: str) -> str:
        """The sentence of one setting ("tokenisation: split on any whitespace, ...")."""
        return f"{self.label}: {self.settings[setting]}"


CONVENTIONS: tuple[Convention, ...] = (
    Convention(
        "split",
        "phrases of a list",
        "how a list of phrases (a key file, a prediction list) is read",
        {
            "as_given": "one phrase per key line or list item",
            "semicolon": "each phrase split again on ';' (KPEval's one-line format), predictions and gold alike",
        },
    ),
    Convention(
        "empty_list",
        "an empty list",
        "what an empty gold or prediction list holds",
        {
            "no_phrase": "no phrase",
            "one_empty_phrase": "one empty phrase (KPEval's one-line format): an empty gold list has |G| = 1, and an "
            "empty prediction list matches it",
        },
    ),
    Convention(
        "tokenizer",
        "tokenisation",
        "how a phrase and a document become words",
        {
            "kweval": "docs/metrics.md §1 normalization (NFKC, casefold, punctuation dropped), then whitespace",
            "whitespace": "split on any whitespace; case and punctuation stay as written (pke)",
            "space": "lower-cased, split on single spaces, punctuation stays on words; a document's lines joined and "
            "'[sep]' removed (KPEval)",
            "nonword": "lower-cased, split on non-word characters \\W (OpenNMT-kpg split_nopunc)",
        },
    ),
    Convention(
        "stemming",
        "stemming",
        "whether words are compared as stems",
        {"none": "words as the tokenizer gives them", "porter": "NLTK's Porter stems (lower-cased)"},
    ),
    Convention(
        "matching",
        "matching",
        "when a prediction matches a gold phrase (each prediction takes the first gold phrase not yet taken)",
        {
            "exact": "equal words (stems)",
            "approx": "equal, or one's words joined by spaces inside the other's (kweval's --match approx)",
            "word": "equal, or one's words a run of the other's (kweval's --match word)",
        },
    ),
    Convention(
        "invalid",
        "invalid predictions",
        "which phrases are dropped before scoring",
        {
            "none": "none: an empty or blank prediction takes a place in |P|",
            "no_words": "a phrase without words, prediction or gold (kweval)",
            "meng": "a prediction without \\W-split words or with the word 'unk' as written; repeats are marked "
            "among all predictions first, so a repeat of a dropped one goes too (OpenNMT-kpg)",
        },
    ),
    Convention(
        "prediction_dedup",
        "repeated predictions",
        "what a repeated prediction does",
        {"drop": "a later repeat is dropped", "numerator": "a repeat stays in |P| but cannot match again (pke)"},
    ),
    Convention(
        "gold_dedup",
        "repeated gold",
        "whether a repeated gold phrase counts in |G|",
        {"drop": "a repeat is dropped before |G| is counted", "keep": "every gold phrase counts in |G|"},
    ),
    Convention(
        "dedup_key",
        "what repeats",
        "when two phrases are repeats of each other",
        {
            "words": "the same words before stemming",
            "stems": "the same stemmed words",
            "joined": "the same stemmed words joined by '_' ('a_b' repeats 'a b')",
        },
    ),
    Convention(
        "cutoff",
        "P@k cut-off",
        "what P@k divides by",
        {
            "hard": "k",
            "flexible": "min(k, |P|): a list shorter than k is not penalised",
            "hard_oracle_flexible": "k; F1@O's P divides by min(|G|, |P|) (docs/metrics.md §9)",
        },
        MOVES_CUTOFF,
    ),
    Convention(
        "macro",
        "macro F1",
        "how the collection's F1 is formed",
        {"mean_f1": "the mean of per-document F1", "f1_of_means": "the F1 of macro P and macro R"},
        MOVES_F1,
    ),
    Convention(
        "present_rule",
        "present gold",
        "when a gold phrase counts as present in its document",
        {
            "none": "no present/absent split (those metrics are not reported)",
            "words": "its words occur consecutively among the document's (tokenised and stemmed alike); a phrase "
            "without words never",
            "words_empty_everywhere": "its words occur consecutively among the document's; a phrase without words "
            "everywhere (OpenNMT-kpg)",
            "matching": "it occurs in the document under the matching: inside its words joined by spaces for approx, "
            "as a run of its words otherwise (docs/metrics.md §9)",
        },
        MOVES_PRESENT,
    ),
    Convention(
        "present_form",
        "present scores",
        "how present (and absent) metrics are scored",
        {
            "filter": "the present predictions against the present gold, as lists of their own (ranks among them)",
            "credit": "every prediction in its rank; only matches of present gold count, over |G_present| "
            "(docs/metrics.md §9)",
        },
        MOVES_PRESENT,
    ),
    Convention(
        "averaged",
        "documents averaged",
        "which documents the macro averages take",
        {
            "all": "every document (one without gold or predictions scores 0)",
            "with_gold": "documents with gold; a present or absent metric also needs a non-blank text, and its recall "
            "and F1 gold on its side: without, undefined, not 0 (kweval)",
        },
    ),
)
BY_NAME: dict[str, Convention] = {c.name: c for c in CONVENTIONS}
NAMES: tuple[str, ...] = tuple(BY_NAME)

PRESET_SETTINGS: dict[str, dict[str, str]] = {
    "pke": {
        "split": "as_given",
        "empty_list": "no_phrase",
        "tokenizer": "whitespace",
        "stemming": "porter",
        "matching": "exact",
        "invalid": "none",
        "prediction_dedup": "numerator",
        "gold_dedup": "keep",
        "dedup_key": "stems",
        "cutoff": "flexible",
        "macro": "mean_f1",
        "present_rule": "none",
        "present_form": "filter",
        "averaged": "all",
    },
    "kpeval": {
        "split": "semicolon",
        "empty_list": "one_empty_phrase",
        "tokenizer": "space",
        "stemming": "porter",
        "matching": "exact",
        "invalid": "none",
        "prediction_dedup": "drop",
        "gold_dedup": "drop",
        "dedup_key": "joined",
        "cutoff": "hard",
        "macro": "f1_of_means",
        "present_rule": "words",
        "present_form": "filter",
        "averaged": "all",
    },
    "meng": {
        "split": "as_given",
        "empty_list": "no_phrase",
        "tokenizer": "nonword",
        "stemming": "porter",
        "matching": "exact",
        "invalid": "meng",
        "prediction_dedup": "drop",
        "gold_dedup": "keep",
        "dedup_key": "joined",
        "cutoff": "flexible",
        "macro": "mean_f1",
        "present_rule": "words_empty_everywhere",
        "present_form": "filter",
        "averaged": "all",
    },
}
PRESETS: tuple[str, ...] = ("kweval", "pke", "kpeval", "meng")
KWEVAL_MATCH = "stem"  # the kweval preset's match mode when none is named: the per-document default (a test checks)


def kweval_settings(match: str = KWEVAL_MATCH) -> dict[str, str]:
    """The kweval preset under `--match match` (docs/metrics.md): stem matching is exact matching of Porter stems,
    with repeats still found on the normalized words."""
    if match not in ("approx", "exact", "word", "stem"):
        raise ValueError(f"unknown match mode {match!r}")
    return {
        "split": "as_given",
        "empty_list": "no_phrase",
        "tokenizer": "kweval",
        "stemming": "porter" if match == "stem" else "none",
        "matching": "exact" if match == "stem" else match,
        "invalid": "no_words",
        "prediction_dedup": "drop",
        "gold_dedup": "drop",
        "dedup_key": "words",
        "cutoff": "hard_oracle_flexible",
        "macro": "mean_f1",
        "present_rule": "matching",
        "present_form": "credit",
        "averaged": "with_gold",
    }


def preset_label(preset: str, match: str = KWEVAL_MATCH) -> str:
    """A preset's name for people: the kweval preset names its match mode ("kweval (approx)")."""
    return f"kweval ({match})" if preset == "kweval" else preset


def preset_settings(preset: str, match: str = KWEVAL_MATCH) -> dict[str, str]:
    """Every convention's setting under `preset` (`match`: the kweval preset's match mode)."""
    if preset == "kweval":
        return kweval_settings(match)
    if preset not in PRESET_SETTINGS:
        raise ValueError(f"unknown preset {preset!r} (one of {', '.join(PRESETS)})")
    return dict(PRESET_SETTINGS[preset])


def check_settings(settings: Mapping[str, str]) -> dict[str, str]:
    """`settings` in `CONVENTIONS` order when each convention has one known setting, else ValueError naming the
    first fault."""
    unknown = [name for name in settings if name not in BY_NAME]
    if unknown:
        raise ValueError(f"unknown convention {unknown[0]!r} (one of {', '.join(NAMES)})")
    out = {}
    for convention in CONVENTIONS:
        if convention.name not in settings:
            raise ValueError(f"no setting for the convention {convention.name!r}")
        value = settings[convention.name]
        if value not in convention.settings:
            raise ValueError(
                f"unknown setting {value!r} of {convention.name} (one of {', '.join(convention.settings)})"
            )
        out[convention.name] = value
    return out


def parse_spec(spec: str, match: str = KWEVAL_MATCH) -> dict[str, str]:
    """The settings a protocol spec names: a preset, then any `convention=setting` changes, comma-separated.

    A setting may be named by a preset too: ``kpeval,cutoff=pke`` is KPEval with pke's cut-off.  ValueError
    (its message fit for one line) for an unknown preset, convention or setting.

    >>> parse_spec("kpeval,cutoff=pke")["cutoff"]
    'flexible'
    """
    base, *changes = [part.strip() for part in spec.split(",")]
    settings = preset_settings(base, match)
    for change in changes:
        name, sep, value = (s.strip() for s in change.partition("="))
        if not sep:
            raise ValueError(f"{change!r} is not CONVENTION=SETTING (after the preset, e.g. kpeval,cutoff=flexible)")
        if name not in BY_NAME:
            raise ValueError(f"unknown convention {name!r} (one of {', '.join(NAMES)})")
        settings[name] = preset_settings(value, match)[name] if value in PRESETS else value
    return check_settings(settings)


def presets_equal_to(settings: Mapping[str, str], match: str = KWEVAL_MATCH) -> list[str]:
    """The presets whose settings are exactly `settings` (the kweval preset under `match`)."""
    return [p for p in PRESETS if preset_settings(p, match) == dict(settings)]


def spec_of(settings: Mapping[str, str], match: str = KWEVAL_MATCH) -> str:
    """A short spec naming `settings`: the preset differing in the fewest conventions, then the changes."""

    def changes(preset: str) -> list[str]:
        base = preset_settings(preset, match)
        return [f"{name}={settings[name]}" for name in NAMES if settings[name] != base[name]]

    best = min(PRESETS, key=lambda p: len(changes(p)))
    return ",".join([best, *changes(best)])


def moves(convention: str, metric: str) -> bool:
    """Whether `convention` can change `metric` (a preset column name such as f1@5, r@M_present, r@50_absent).

    A convention that cannot is left out of a gap's decomposition (its contribution is 0 by definition).
    """
    kind = BY_NAME[convention].moves
    measure, _, rest = metric.partition("@")
    cutoff, _, split = rest.partition("_")
    if kind == MOVES_CUTOFF:
        return measure in ("p", "f1") and cutoff != "M"
    if kind == MOVES_F1:
        return measure == "f1"
    if kind == MOVES_PRESENT:
        return split in ("present", "absent")
    return True
